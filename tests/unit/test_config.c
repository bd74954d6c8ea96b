/* The library's config file: reading, setting, unknown keys, atomic rewrite. */
#include "config.h"
#include "harness.h"
#include "util.h"

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
