/* Unit tests of lib/base/util.c: ids, UTF-8 decoding and repair, strict parsing, the string buffer.
 */
#include "base/util.h"
#include "harness.h"

#include <stdlib.h>

VT_TEST(util_id_encode)
{
    char a[12], b[12];

    vt_id_encode(0, a);
    CHECK_STR(a, "AAAAAAAAAAA");
    vt_id_encode(UINT64_MAX, a);
    CHECK_INT(strlen(a), 11);
    CHECK(vt_id_valid(a));
    CHECK(a[0] != '-' && a[0] != '_'); /* never looks like an option */
    vt_id_encode(12345, a);
    vt_id_encode(12346, b);
    CHECK(strcmp(a, b) != 0);
}

VT_TEST(util_id_valid)
{
    char longid[80];

    CHECK(vt_id_valid("TUnPNY4E2fw"));
    CHECK(vt_id_valid("a-b_c"));
    CHECK(!vt_id_valid(""));
    CHECK(!vt_id_valid(NULL));
    CHECK(!vt_id_valid("../etc"));
    CHECK(!vt_id_valid("a b"));
    CHECK(!vt_id_valid("a%2e"));
    memset(longid, 'a', sizeof(longid));
    longid[64] = '\0';
    CHECK(vt_id_valid(longid));
    longid[64] = 'a';
    longid[65] = '\0';
    CHECK(!vt_id_valid(longid));
}

VT_TEST(util_utf8_clean)
{
    char *s;

    s = vt_utf8_clean("plain text");
    CHECK_STR(s, "plain text");
    free(s);
    s = vt_utf8_clean("caf\xc3\xa9 \xe2\x98\x85");
    CHECK_STR(s, "caf\xc3\xa9 \xe2\x98\x85");
    free(s);
    s = vt_utf8_clean("bad \xff byte");
    CHECK_STR(s, "bad \xef\xbf\xbd byte");
    free(s);
    s = vt_utf8_clean("overlong \xc0\xaf");
    CHECK(strstr(s, "\xc0") == NULL);
    free(s);
    s = vt_utf8_clean("surrogate \xed\xa0\x80");
    CHECK(strstr(s, "\xed\xa0") == NULL);
    free(s);
    s = vt_utf8_clean("esc \x1b[31m red");
    CHECK(strchr(s, 0x1b) == NULL);
    free(s);
    s = vt_utf8_clean("cut \xe2\x98");
    CHECK_STR(s, "cut \xef\xbf\xbd\xef\xbf\xbd");
    free(s);
}

VT_TEST(util_utf8_decode)
{
    uint32_t cp = 0;

    CHECK(vt_utf8_decode("a", 1, &cp) == 1 && cp == 'a');
    CHECK(vt_utf8_decode("\xc3\xa9", 2, &cp) == 2 && cp == 0xe9);
    CHECK(vt_utf8_decode("\xe2\x98\x85", 3, &cp) == 3 && cp == 0x2605);
    CHECK(vt_utf8_decode("\xf0\x9f\x98\x80", 4, &cp) == 4 && cp == 0x1f600);
    CHECK(vt_utf8_decode("\xf4\x8f\xbf\xbf", 4, NULL) == 4); /* U+10FFFF */
    CHECK(vt_utf8_decode("\xf4\x90\x80\x80", 4, NULL) == 0); /* past U+10FFFF */
    CHECK(vt_utf8_decode("\xc0\xaf", 2, NULL) == 0);         /* overlong */
    CHECK(vt_utf8_decode("\xe0\x80\xaf", 3, NULL) == 0);     /* overlong */
    CHECK(vt_utf8_decode("\xf0\x80\x80\xaf", 4, NULL) == 0); /* overlong */
    CHECK(vt_utf8_decode("\xed\xa0\x80", 3, NULL) == 0);     /* surrogate */
    CHECK(vt_utf8_decode("\xe2\x98\x85", 2, NULL) == 0);     /* cut short by n */
    CHECK(vt_utf8_decode("\xe2\x98", 4, NULL) == 0);         /* cut short by the NUL */
    CHECK(vt_utf8_decode("\x80", 1, NULL) == 0 && vt_utf8_decode("\xff", 1, NULL) == 0);
    CHECK(vt_utf8_decode("", 0, NULL) == 0);
}

VT_TEST(util_parse_long)
{
    long v = 0;

    CHECK_INT(vt_parse_long("42", 0, 100, &v), 0);
    CHECK_INT(v, 42);
    CHECK(vt_parse_long("", 0, 100, &v) != 0);
    CHECK(vt_parse_long("4x", 0, 100, &v) != 0);
    CHECK(vt_parse_long("101", 0, 100, &v) != 0);
    CHECK(vt_parse_long("-1", 0, 100, &v) != 0);
    CHECK(vt_parse_long("99999999999999999999999", 0, 100, &v) != 0);
}

VT_TEST(util_sb)
{
    struct vt_sb sb = {0};
    char *s;

    for (int i = 0; i < 1000; i++)
        vt_sb_addf(&sb, "%d,", i);
    CHECK(sb.len > 3000);
    CHECK(!strncmp(sb.buf, "0,1,2,", 6));
    s = vt_sb_detach(&sb);
    CHECK(sb.buf == NULL && sb.len == 0);
    free(s);
    s = vt_xasprintf("%s-%d", "x", 7);
    CHECK_STR(s, "x-7");
    free(s);
}
