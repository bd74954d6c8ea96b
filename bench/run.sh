#!/usr/bin/env bash
# make bench: every speed and memory target as a ratio against a baseline measured in the
# same run, printed as tables. Never part of make check (timings are noisy here).
set -euo pipefail
cd "$(dirname "$0")/.."
export VIDTHEQUE=${VIDTHEQUE:-$PWD/vidtheque} OMP_THREAD_LIMIT=1
echo "== keyframe stage vs ffmpeg decode (720p H.264 with B-frames)"
bash bench/keyframe_bench.sh
echo
echo "== shot boundaries with dissolves and fades, and the keyframe stage vs ffmpeg decode"
bash bench/transitions_bench.sh
echo
echo "== shot boundaries and on-screen words on real footage (tests/data/realcuts) and made trouble, PySceneDetect beside (PYSCENEDETECT_SRC), keyframe stage s per minute"
bash bench/realcuts_bench.sh
echo
echo "== text that changes inside a shot: words read with the keyframe stage's text frames vs without (VIDTHEQUE_TEXT_FRAMES=0), and the stage's s per minute"
bash bench/textchange_bench.sh
echo
echo "== OCR per kept frame vs the tesseract command"
env -u OMP_THREAD_LIMIT bash bench/ocr_bench.sh
echo
echo "== OCR of small text (12-40 px at 720p) and photo-like frames: recall, noise, per frame vs the tesseract command"
env -u OMP_THREAD_LIMIT bash bench/ocr_small_bench.sh
echo
echo "== OCR of light text on dark screens: recall and CPU a frame with the inversion of dark parts vs without"
bash bench/ocr_dark_bench.sh
echo
echo "== speech recognition vs pocketsphinx_continuous"
bash bench/stt_bench.sh
echo
echo "== speech hints: WER with the slides' words vs without (hint fixtures, LibriVox without slides)"
bash bench/stt_hints_bench.sh
echo
echo "== voice activity detection: WER and time with Silero's segments vs the energy segmenter"
bash bench/vad_bench.sh
echo
echo "== Whisper log-mel front end: one 30 s window on one core (PyTorch's time beside it where installed)"
bash bench/whisper_mel_bench.sh
echo
echo "== Whisper's network on tiny, base and small shapes (generated weights): encoder s per 30 s window, decoder ms per token, peak RSS"
bash bench/whisper_model_bench.sh
echo
echo "== Whisper in process: tiny/base/small-shaped (generated weights) next to PocketSphinx, same audio and cores"
bash bench/whisper_bench.sh
echo
echo "== speech through a transcription server: the stt stage's overhead over the (fake) server's time"
bash bench/stt_server_bench.sh
echo
echo "== speech recognition of a 10 h recording: peak memory of add (VIDTHEQUE_BASELINE=binary to compare)"
bash bench/stt_memory_bench.sh
echo
echo "== Whisper on 1 h and 3 h recordings with speech: peak memory of add, against PocketSphinx"
bash bench/whisper_memory_bench.sh
echo
echo "== search: 10,000 videos, 1,000,000 cues vs plain FTS5 MATCH ORDER BY rank"
bash bench/search_bench.sh
echo
echo "== search precision on the generated talks with the test text model: hybrid (relevance floor) next to words only"
bash bench/search_precision_bench.sh
echo
echo "== search on PostgreSQL next to SQLite on the same rows (PG_BENCH_VIDEOS=10000: 1,000,000 cues)"
bash bench/pg_search_bench.sh
echo
echo "== Model2Vec text embedding on one core vs tokenising only (chunks of ~60 words)"
bash bench/embed_bench.sh
echo
echo "== Model2Vec memory: peak RSS of a search by meaning and of redo text_embed, over a words search, against the model file's size (256 MiB int8)"
bash bench/m2v_memory_bench.sh
echo
echo "== MobileNet v1 0.25 image embeddings (224x224) vs a plain GEMM of the same multiply-adds"
bash bench/tflite_bench.sh
echo
echo "== vector search: 1,000,000 x 256 dims, top-50 vs the exact float32 scan"
bash bench/vindex_bench.sh
echo
echo "== hybrid search: 1,000,000 cues + 1,000,000 vectors vs words only"
bash bench/hybrid_bench.sh
echo
echo "== frames by likeness: more like this over 1,000,000 frame vectors; same footage on 100 videos"
bash bench/frames_bench.sh
echo
echo "== job queue: claim + lease + commit per stage (SQLite, PostgreSQL), its share of a talk's indexing, a fleet of 8-64 stub workers on PostgreSQL"
bash bench/queue_bench.sh
echo
echo "== ingest on PostgreSQL with 1, 2 and 4 worker processes: videos/min, speed-up over one, the queue's share"
bash bench/ingest_bench.sh
echo
echo "== whole add: peak memory and realtime factors"
bash bench/add_bench.sh
echo
echo "== web server: wrk on loopback vs the same bodies from python3 -m http.server"
bash bench/web_bench.sh
echo
echo "== web pages: bytes of the video page's first paint vs every frame at full size"
bash bench/page_bytes_bench.sh
echo
echo "== web pages: weight and time of a 1,000-shot video page and a 200-hit search, before (a baseline commit) and after"
bash bench/page_weight_bench.sh
echo
echo "== server soak: mixed requests on every route, memory and stalls"
bash bench/soak_bench.sh
echo
echo "== start-up of reading commands on a 10-video library vs sqlite3"
bash bench/startup_bench.sh
echo
echo "== the library page of 1,000 videos: server time vs a file of the same size from the same server"
bash bench/library_bench.sh
