/*
 * help: the overall help (the commands of the table and the global options), or a
 * command's usage, summary and what more there is to say about it.
 */
#include "base/config.h"
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

/* What 'help COMMAND' says after the summary. */
static const struct {
    const char *name, *text;
} more_help[] = {
    {"ls", "One row per video, fields separated by tabs. A backslash, tab, newline or carriage\n"
           "return inside a field is written \\\\, \\t, \\n or \\r; other control characters\n"
           "(which could drive the terminal) become spaces.\n"},
    {"add", "Each FILE or URL is registered (its id printed), then indexed by this process, one\n"
            "stage after another, as its stages' inputs are ready. On a library whose database is\n"
            "PostgreSQL (config key db), add only registers and queues: workers on any machine\n"
            "index (vidtheque worker). Either way:\n"
            "  --queue         only register and queue, for workers (the default on PostgreSQL)\n"
            "  --wait          with --queue: wait until every video has settled, printing each\n"
            "                  stage as it runs and ends; exit 1 when a video is not ok\n"
            "  --priority N    its stages run before those of lower priority (default 0)\n"},
    {"worker",
     "Claims the next runnable stage of any video (queued, inputs settled, retry due; or\n"
     "running under a lease that expired: its worker is presumed dead) and runs it as add\n"
     "would, in N threads. Runs on SQLite (processes on one machine) and on PostgreSQL\n"
     "(any number of machines sharing the library directory).\n"
     "  --stages LIST   only these stages (e.g. stt on a GPU box, fetch,keyframe,ocr,...)\n"
     "  --concurrency N stage threads (default 1)\n"
     "  --lease S       each claim's lease in seconds (default 60), extended every S/3 while\n"
     "                  the stage runs; a stage whose lease expires is taken over and the\n"
     "                  late result of its first worker refused\n"
     "  --drain         exit once no stage it runs is queued or running anywhere\n"
     "  --stats         print the queue's overhead per stage (p50, p99) at exit\n"
     "SIGTERM or SIGINT: claim no more and finish the running stages, then exit 0; a\n"
     "second one gives their leases back (queued again, the attempt not counted) and\n"
     "exits 0 at once.\n"},
    {"search",
     "Moments whose words or meaning match QUERY, best first: video, start-end, source\n"
     "(speech, screen, title, visual), the signals that found it and, for a hit found by\n"
     "meaning or pictures, how far it stands above chance: strong or weak. Hits by meaning\n"
     "or pictures below the model's relevance floor (what queries that cannot match score\n"
     "by chance, measured once per model and library) are left out; word hits never are.\n"
     "--explain prints the floor the search applied first; --json has it in \"floors\".\n"
     "--mode words|meaning|hybrid (default: hybrid when a text embedding model is\n"
     "configured), --source, --video and --limit narrow it. The query language:\n"
     "\"a phrase\", -not, prefix*, video:ID, source:screen.\n"},
    {"jobs",
     "Counts of stages by state (runnable: queued with every input settled and no retry\n"
     "pending), the running stages with their worker (host:pid:nonce) and when their lease\n"
     "expires, and the number of failed stages; --failed lists each with its last error\n"
     "(after its last attempt: 'vidtheque redo ID --stage NAME' queues it again, with its\n"
     "attempts afresh: \"after attempt 5 (1 since redo)\").\n"},
    {"models",
     "Without arguments: the backends the config chooses (and whether the text embedding\n"
     "model is found), then the models pulled into LIBRARY/models/, each with its repo,\n"
     "revision, commit, size and whether its files are whole, then the relevance floors\n"
     "the searches measured (LIBRARY/calibration.json): per model, the cosine a hit by\n"
     "meaning or pictures must pass, where \"strong\" starts, and the chance scores of\n"
     "the queries that cannot match it was measured with.\n\n"
     "pull NAME downloads a Model2Vec model from the Hugging Face hub: NAME is a repo id\n"
     "(minishlab/potion-base-8M) or a short name: potion-base-2M, potion-base-4M,\n"
     "potion-base-8M, potion-base-32M, potion-retrieval-32M, potion-multilingual-128M;\n"
     "or a Whisper speech model: whisper-tiny, whisper-base, whisper-small (each also\n"
     "with .en, English only), distil-small.en, distil-medium.en, distil-large-v3.\n"
     "--revision picks a branch, tag or commit (default main). Each file is checked\n"
     "against the size and SHA-256 (or git blob id) the hub lists; the model is installed\n"
     "whole or not at all, and an interrupted pull continues where it stopped when run\n"
     "again. Pulling the commit that is installed does nothing. The hub is $HF_ENDPOINT\n"
     "when set, else https://huggingface.co. Then:\n"
     "  vidtheque config set text_embed.backend model2vec\n"
     "  vidtheque config set text_embed.model potion-base-8M\n"
     "  vidtheque config set stt.model whisper-base.en\n\n"
     "rm NAME... removes pulled models (by name, repo id or folder name).\n"},
    {"config",
     "Without arguments: the keys that are set (API keys masked). Keys:\n"
     "  text_embed.backend  model2vec | openai | none (default none: no vectors)\n"
     "  text_embed.model    model2vec: a pulled model's name or a folder holding\n"
     "                      model.safetensors and tokenizer.json; openai: the server's model\n"
     "  text_embed.url      openai: the server's base URL (http://127.0.0.1:11434)\n"
     "  text_embed.api_key  openai: a Bearer token, when the server wants one\n"
     "  stt.backend         pocketsphinx | whisper | openai (default pocketsphinx;\n"
     "                      whisper when only stt.model is set)\n"
     "  stt.model           whisper: a pulled model's name (whisper-base.en) or a folder\n"
     "                      with config.json and model.safetensors, or a ggml file;\n"
     "                      openai: the server's model name (whisper-1)\n"
     "  stt.url             openai: the transcription server's base URL\n"
     "  stt.api_key         openai: a Bearer token, when the server wants one\n"
     "  stt.hints           true | false: the video's own words as speech hints (true)\n"
     "  stt.vad             energy | silero: what finds the speech (default energy;\n"
     "                      silero pays when music, applause or noise fill the pauses)\n"
     "  stt.vad_model       silero: the Silero VAD ggml file (default the installed one,\n"
     "                      " VT_CONFIG_VAD_MODEL ")\n"
     "  frame_embed.backend tflite | openai | none (default none: no picture vectors)\n"
     "  frame_embed.model   tflite: a .tflite file or a folder holding one; openai: the\n"
     "                      server's model\n"
     "  frame_embed.tensor  tflite: the tensor that is the embedding (default: the input\n"
     "                      of the last layer)\n"
     "  frame_embed.url     openai: the image-embedding server's base URL\n"
     "  frame_embed.api_key openai: a Bearer token, when the server wants one\n"
     "  frame_embed.joint_text  openai: 1 when the model embeds text into the same space\n"
     "The file is LIBRARY/config, readable by its owner only.\n"},
};

void cli_print_help(FILE *f)
{
    const struct cli_cmd *c;

    fputs("usage: vidtheque [-L DIR] COMMAND [ARGS]\n\n"
          "A video library searchable by what is said and shown in videos.\n\n"
          "commands:\n",
          f);
    for (size_t i = 0; (c = cli_cmd_at(i)); i++)
        fprintf(f, "  %-8s %s\n", c->name, c->summary);
    fputs("\noptions:\n"
          "  -L DIR     library directory (default $VIDTHEQUE_LIBRARY, else\n"
          "             $XDG_DATA_HOME/vidtheque, else ~/.local/share/vidtheque)\n"
          "  -q         no progress or log lines on stderr\n"
          "  --version  print the version\n\n"
          "'vidtheque COMMAND --help' tells more about a command.\n",
          f);
}

int cmd_help(int argc, char **argv)
{
    if (argc > 1) {
        const struct cli_cmd *c = cli_find_cmd(argv[1]);

        if (!c)
            return cli_usage_error("help", "'%s' is not a command", argv[1]);
        cli_print_usage(stdout, c->name);
        printf("\n%s\n", c->summary);
        for (size_t i = 0; i < sizeof(more_help) / sizeof(more_help[0]); i++)
            if (!strcmp(more_help[i].name, c->name))
                printf("\n%s", more_help[i].text);
        return EXIT_OK;
    }
    cli_print_help(stdout);
    return EXIT_OK;
}
