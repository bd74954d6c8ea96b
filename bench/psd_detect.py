#!/usr/bin/env python3
"""Run one of PySceneDetect's detectors, with its published defaults, on a video and print
the scenes in the shape of tests/tools/kfdump's output (shots[] with start_s and end_s), so
that tests/tools/score_realcuts.py scores it like ours.

    psd_detect.py content|adaptive VIDEO

The scenedetect package comes from PYTHONPATH (a PySceneDetect source tree); it needs
OpenCV's Python module (Debian: python3-opencv) and numpy. Defaults as published:
ContentDetector(threshold=27, min_scene_len=15), AdaptiveDetector(adaptive_threshold=3,
min_scene_len=15, window_width=2, min_content_val=15); we pass no arguments, so what the
source tree says is what runs. Boundaries are frame numbers in the file's own rate.
"""
import json
import sys

from scenedetect import AdaptiveDetector, ContentDetector, open_video, SceneManager


def main():
    kind, path = sys.argv[1], sys.argv[2]
    det = ContentDetector() if kind == "content" else AdaptiveDetector()
    video = open_video(path)
    sm = SceneManager()
    sm.add_detector(det)
    sm.detect_scenes(video, show_progress=False)
    fps = float(video.frame_rate)

    def frame(tc):
        # frame_num in newer releases, get_frames() in older ones
        return tc.frame_num if hasattr(type(tc), "frame_num") else tc.get_frames()

    scenes = sm.get_scene_list(start_in_scene=True)
    shots = [{"index": i, "start_s": frame(a) / fps, "end_s": frame(b) / fps}
             for i, (a, b) in enumerate(scenes)]
    if not shots:
        shots = [{"index": 0, "start_s": 0.0, "end_s": float(video.duration.get_seconds())}]
    json.dump({"model": "pyscenedetect-" + kind, "shots": shots, "frames": []}, sys.stdout)


if __name__ == "__main__":
    main()
