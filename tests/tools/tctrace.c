/*
 * tctrace: the text grid's signals over a stretch of a video, to see why a state of a
 * shot's text gets no frame. It includes lib/visual/textchange.c itself, so it reads the
 * very statics the stage uses.
 *   tctrace FEATS T0 T1     FEATS as `sdtune dump` writes it; times in seconds
 * Built as sdtrace.c is. One line per analysed frame: time, d1, the text grid's ink, its
 * cells changed from the previous frame (by TC_CELL and by a third of it), the line grid's
 * cells moved (TC_LINE_MOVE) and the screen's ground (-1 when not a screen).
 */
#include "../../lib/visual/textchange.c"

#include <stdio.h>

int main(int argc, char **argv)
{
    struct vt_sd_feat *f = NULL;
    size_t n = 0, cap = 0;
    FILE *fp;

    if (argc != 4 || !(fp = fopen(argv[1], "rb"))) {
        fprintf(stderr, "usage: tctrace FEATS T0 T1\n");
        return 2;
    }
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            f = realloc(f, cap * sizeof(*f));
        }
        if (fread(&f[n], sizeof(*f), 1, fp) != 1)
            break;
        n++;
    }
    fclose(fp);
    for (size_t i = 1; i < n; i++) {
        if (f[i].t_s < atof(argv[2]) || f[i].t_s > atof(argv[3]))
            continue;
        printf("%4zu %7.3f d1 %5.2f ink %5d txt %2d/%2d line %3d ground %3d |", i, f[i].t_s,
               f[i].d1, ink(&f[i]), changed_cells(f[i].text, f[i - 1].text, TC_CELL, NULL),
               changed_cells(f[i].text, f[i - 1].text, TC_CELL / 3, NULL),
               grid_changed(f[i].line, f[i - 1].line, VT_SD_LINE, TC_LINE_MOVE, NULL),
               vt_sd_screen_ground(&f[i - 1], &f[i]));
        for (int k = 0; k < VT_SD_TEXT; k++)
            if (abs((int)f[i].text[k] - (int)f[i - 1].text[k]) > TC_CELL)
                printf(" %d:%d>%d", k, f[i - 1].text[k], f[i].text[k]);
        printf("\n");
    }
    free(f);
    return 0;
}
