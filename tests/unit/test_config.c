/* The library's config file: reading, setting, unknown keys, atomic rewrite. */
#include "base/util.h"
#include "harness.h"
#include "model/stage_config.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

VT_TEST(config_roundtrip)
{
    char dir[] = "/tmp/vt-config-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char err[256], path[128];
    snprintf(path, sizeof(path), "%s/config", dir);
    struct vt_config *c = NULL;
    CHECK_INT(vt_config_load(dir, &c, err, sizeof(err)), 0); /* no file: empty */
    CHECK(vt_config_get(c, "text_embed.model") == NULL);
    CHECK_INT(vt_config_set(c, "text_embed.model", "  potion-base-8M ", err, sizeof(err)), 0);
    CHECK_INT(vt_config_set(c, "nope.key", "x", err, sizeof(err)), VT_EINVAL);
    CHECK(strstr(err, "unknown config key 'nope.key'") != NULL);
    CHECK_INT(vt_config_set(c, "stt.url", "a\nb", err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_config_set(c, "text_embed.api_key", "s3cret", err, sizeof(err)), 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    vt_config_free(c);

    CHECK_INT(vt_config_load(dir, &c, err, sizeof(err)), 0);
    CHECK_STR(vt_config_get(c, "text_embed.model"), "potion-base-8M");
    CHECK_STR(vt_config_get(c, "text_embed.api_key"), "s3cret");
    CHECK_INT(vt_config_set(c, "text_embed.api_key", NULL, err, sizeof(err)), 0);
    CHECK(vt_config_get(c, "text_embed.api_key") == NULL);
    vt_config_free(c);

    /* comments and lines of a newer version are kept; the last of a key wins */
    write_text(path, "# mine\ntext_embed.backend = openai\nfuture.key = 1\n"
                     "text_embed.backend=model2vec\n\ngarbage line\n");
    CHECK_INT(vt_config_load(dir, &c, err, sizeof(err)), 0);
    CHECK_STR(vt_config_get(c, "text_embed.backend"), "model2vec");
    CHECK(vt_config_get(c, "future.key") == NULL);
    CHECK_INT(vt_config_set(c, "stt.backend", "openai", err, sizeof(err)), 0);
    vt_config_free(c);
    char *data = NULL;
    size_t len = 0;
    CHECK_INT(vt_read_file_capped(path, "config", 4096, &data, &len, err, sizeof(err)), 0);
    CHECK(data && strstr(data, "# mine\n") && strstr(data, "future.key = 1\n") &&
          strstr(data, "garbage line\n") && strstr(data, "stt.backend = openai\n"));
    free(data);

    /* a binary file is refused with one line */
    FILE *f = fopen(path, "w");
    fwrite("a\0b", 1, 3, f);
    fclose(f);
    CHECK_INT(vt_config_load(dir, &c, err, sizeof(err)), VT_EINVAL);
    CHECK(c == NULL);
    vt_rm_rf(dir);
}

VT_TEST(config_check_values)
{
    char err[256];
    static const char *const good[][2] = {
        {"frame_embed.api_style", "openai"},
        {"frame_embed.api_style", "jina"},
        {"frame_embed.timeout_s", "0.5"},
        {"frame_embed.timeout_s", "3600"},
        {"frame_embed.batch", "1"},
        {"frame_embed.batch", "128"},
        {"frame_embed.model", "anything"},
        {"text_embed.url", "not checked here"},
        {"stt.vad", "energy"},
        {"stt.vad", "silero"},
        {"stt.vad_model", "/some/file.bin"},
    };
    static const char *const bad[][2] = {
        {"frame_embed.api_style", "Jina"},
        {"frame_embed.api_style", ""},
        {"frame_embed.timeout_s", "0"},
        {"frame_embed.timeout_s", "3600.5"},
        {"frame_embed.timeout_s", "-1"},
        {"frame_embed.timeout_s", "1e3"},
        {"frame_embed.timeout_s", "inf"},
        {"frame_embed.timeout_s", "1.2.3"},
        {"frame_embed.timeout_s", ""},
        {"frame_embed.timeout_s", "5 "},
        {"frame_embed.batch", "0"},
        {"frame_embed.batch", "129"},
        {"frame_embed.batch", "00001"},
        {"frame_embed.batch", "+4"},
        {"frame_embed.batch", "4x"},
        {"frame_embed.batch", ""},
        {"frame_embed.batch", "999999999999999999999"},
        {"stt.vad", "Silero"},
        {"stt.vad", "webrtc"},
        {"stt.vad", ""},
        {"stt.vad", "silero "},
        {"stt.vad_model", ""},
    };
    for (size_t i = 0; i < VT_ARRAY_LEN(good); i++)
        CHECK_INT(vt_config_check(good[i][0], good[i][1], err, sizeof(err)), 0);
    for (size_t i = 0; i < VT_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        int rc = vt_config_check(bad[i][0], bad[i][1], err, sizeof(err));
        if (rc != VT_EINVAL)
            fprintf(stderr, "  accepted %s = '%s'\n", bad[i][0], bad[i][1]);
        CHECK_INT(rc, VT_EINVAL);
        CHECK(strstr(err, bad[i][0]) == err && !strchr(err, '\n'));
    }
}

/* db: a postgresql:// URL; listed and said without its password */
VT_TEST(config_db_url)
{
    char err[256], *r;

    CHECK_INT(vt_config_check("db", "postgresql://u@h/db", err, sizeof(err)), 0);
    CHECK_INT(vt_config_check("db", "postgres://h/db?host=%2Ftmp", err, sizeof(err)), 0);
    CHECK_INT(vt_config_check("db", "mysql://h/db", err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_config_check("db", "postgresql://h/d b", err, sizeof(err)), VT_EINVAL);
    CHECK_INT(vt_config_check("db", "/tmp/library.db", err, sizeof(err)), VT_EINVAL);
    r = vt_config_db_redact("postgresql://u:s3cret@h:5432/db?password=x&host=y");
    CHECK_STR(r, "postgresql://u:***@h:5432/db?password=***&host=y");
    free(r);
    r = vt_config_db_redact("postgresql://u@/db?host=%2Ftmp");
    CHECK_STR(r, "postgresql://u@/db?host=%2Ftmp");
    free(r);
    r = vt_config_db_redact("postgresql://h/db?sslpassword=x&user=password=y");
    CHECK_STR(r, "postgresql://h/db?sslpassword=***&user=password=y");
    free(r);
}

/* ---- every key spelt once: its line of the table (VT_KEY(ID) elsewhere) ---- */

static int key_files, key_bad;

/* Where a key's name may stand as a string: the table itself (stage_config.h and .c);
 * the file format's reading of db, which finds the database before any stage exists; and
 * `init --db`, an option's name. */
static int key_spelling_allowed(const char *path, const char *key, const char *line)
{
    /* the database's keys are read by base/config.c, below the stage table's layer */
    return strstr(path, "lib/model/stage_config.") ||
           ((!strcmp(key, "db") || !strcmp(key, "db.password_file")) &&
            strstr(path, "lib/base/config.c")) ||
           (!strcmp(key, "db") && strstr(line, "required_argument"));
}

static int key_scan_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    size_t n = strlen(path);
    char line[4096], q[64];
    FILE *f;
    int no = 0;

    (void)sb, (void)ftw;
    if (type != FTW_F || n < 2 || (strcmp(path + n - 2, ".c") && strcmp(path + n - 2, ".h")))
        return 0;
    f = fopen(path, "r");
    if (!f)
        return 0;
    key_files++;
    while (fgets(line, sizeof(line), f)) {
        no++;
        for (size_t k = 0; vt_config_keys[k]; k++) {
            snprintf(q, sizeof(q), "\"%s\"", vt_config_keys[k]);
            if (strstr(line, q) && !key_spelling_allowed(path, vt_config_keys[k], line)) {
                printf("  %s:%d: %s spelt by hand (VT_KEY, model/stage_config.h)\n", path, no, q);
                key_bad++;
            }
        }
    }
    fclose(f);
    return 0;
}

VT_TEST(config_keys_spelt_once)
{
    /* the sources, found from this file's name (the runner runs from the root) */
    const char *self = __FILE__, *tail = strstr(self, "tests/unit/test_config.c");
    const char *dirs[] = {"lib", "src"};
    char dir[4096];

    key_files = key_bad = 0;
    for (size_t i = 0; i < 2; i++) {
        snprintf(dir, sizeof(dir), "%.*s%s", (int)(tail ? tail - self : 0), self, dirs[i]);
        CHECK_INT(nftw(dir, key_scan_file, 16, FTW_PHYS), 0);
    }
    CHECK(key_files > 100);
    CHECK_INT(key_bad, 0);
    /* the ids name the table's lines in order */
    CHECK_STR(VT_KEY(STT_VAD), "stt.vad");
    CHECK_STR(VT_KEY(DB), "db");
    CHECK(vt_config_table[VT_KEY_COUNT].name == NULL);
    CHECK(vt_config_keys[VT_KEY_COUNT] == NULL);
}

/* stt's backend: pocketsphinx by default, whisper when only stt.model is set, openai with a
 * URL, and what stt.backend says when set; `config set` takes whisper. */
VT_TEST(config_stt_backend)
{
    char dir[] = "/tmp/vt-config-XXXXXX", err[256];
    struct vt_config *c = NULL;
    int inferred = -1;

    CHECK(mkdtemp(dir) != NULL);
    CHECK_INT(vt_config_load(dir, &c, err, sizeof(err)), 0);
    CHECK_STR(vt_config_backend(c, VT_STAGE_STT, &inferred), "pocketsphinx");
    CHECK_INT(inferred, 0);
    CHECK_INT(vt_config_set(c, "stt.model", "whisper-base.en", err, sizeof(err)), 0);
    CHECK_STR(vt_config_backend(c, VT_STAGE_STT, &inferred), "whisper");
    CHECK_INT(inferred, 1);
    CHECK_INT(vt_config_set(c, "stt.url", "http://127.0.0.1:9", err, sizeof(err)), 0);
    CHECK_STR(vt_config_backend(c, VT_STAGE_STT, NULL), "openai");
    CHECK_INT(vt_config_set(c, "stt.backend", "pocketsphinx", err, sizeof(err)), 0);
    CHECK_STR(vt_config_backend(c, VT_STAGE_STT, &inferred), "pocketsphinx");
    CHECK_INT(inferred, 0);
    CHECK_INT(vt_config_check_set("stt.backend", "whisper", err, sizeof(err)), 0);
    CHECK_INT(vt_config_check_set("stt.backend", "whisperx", err, sizeof(err)), VT_EINVAL);
    vt_config_free(c);
    vt_rm_rf(dir);
}
