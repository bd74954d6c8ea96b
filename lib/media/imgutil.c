/*
 * Image helpers of the keyframe stage. They work on plain byte arrays so that the
 * unit tests can feed them synthetic images; FFmpeg stays in keyframe.c. JPEG goes
 * through libjpeg-turbo into memory and then to disk with vt_write_file_atomic, so a
 * reader never sees half a file.
 */
#include "media/imgutil.h"

/* jpeglib.h needs FILE from stdio.h first */
/* clang-format off */
#include <stdio.h>
#include <jpeglib.h>
/* clang-format on */
#include "base/util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void vt_img_resize_gray(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw,
                        int dh)
{
    for (int y = 0; y < dh; y++) {
        int y0 = (int)((int64_t)y * sh / dh), y1 = (int)((int64_t)(y + 1) * sh / dh);

        if (y1 <= y0)
            y1 = y0 + 1;
        for (int x = 0; x < dw; x++) {
            int x0 = (int)((int64_t)x * sw / dw), x1 = (int)((int64_t)(x + 1) * sw / dw);
            uint32_t sum = 0;

            if (x1 <= x0)
                x1 = x0 + 1;
            for (int yy = y0; yy < y1; yy++) {
                const uint8_t *row = src + (size_t)yy * sstride;

                for (int xx = x0; xx < x1; xx++)
                    sum += row[xx];
            }
            dst[(size_t)y * dw + x] = (uint8_t)((sum + (uint32_t)((x1 - x0) * (y1 - y0)) / 2) /
                                                (uint32_t)((x1 - x0) * (y1 - y0)));
        }
    }
}

void vt_img_box_down(const uint8_t *src, int sstride, int fx, int fy, uint8_t *dst, int dw, int dh)
{
    uint32_t acc[4096];
    uint32_t area = (uint32_t)(fx * fy);
    /* a division per pixel would cost more than the sums: multiply by the rounded-up
     * inverse, exact for sums below 2^16 (area <= 256) */
    uint64_t inv = ((1ULL << 32) + area - 1) / area;

    for (int y = 0; y < dh; y++) {
        int n = dw * fx, x;

        if (n > (int)VT_ARRAY_LEN(acc)) {
            vt_img_resize_gray(src + (size_t)y * fy * sstride, n, fy, sstride, dst + (size_t)y * dw,
                               dw, 1);
            continue;
        }
        memset(acc, 0, (size_t)n * sizeof(acc[0]));
        /* rows summed column-wise, in blocks of fixed length that -O2 vectorises */
        for (int yy = 0; yy < fy; yy++) {
            const uint8_t *r = src + ((size_t)y * fy + yy) * sstride;

            for (x = 0; x + 16 <= n; x += 16)
                for (int k = 0; k < 16; k++)
                    acc[x + k] += r[x + k];
            for (; x < n; x++)
                acc[x] += r[x];
        }
        for (x = 0; x < dw; x++) {
            uint32_t sum = area / 2;

            for (int k = 0; k < fx; k++)
                sum += acc[x * fx + k];
            dst[(size_t)y * dw + x] = (uint8_t)(area <= 256 ? (sum * inv) >> 32 : sum / area);
        }
    }
}

double vt_img_laplacian_var(const uint8_t *g, int w, int h, int stride)
{
    /* integer sums, 32 bits within a row (vectorised), 64 across rows: exact */
    int64_t s = 0, s2 = 0, n = 0;

    if (w < 3 || h < 3)
        return 0;
    for (int y = 1; y < h - 1; y++) {
        const uint8_t *r = g + (size_t)y * stride;
        const uint8_t *up = r - stride, *dn = r + stride;
        int32_t rs = 0;
        uint32_t rs2 = 0;

        for (int x = 1; x < w - 1; x++) {
            int32_t l = r[x - 1] + r[x + 1] + up[x] + dn[x] - 4 * r[x];

            rs += l;
            rs2 += (uint32_t)(l * l);
        }
        if (w > 4000) {
            /* rows this long could overflow 32 bits: redo them in 64 */
            int64_t ls = 0, ls2 = 0;

            for (int x = 1; x < w - 1; x++) {
                int64_t l = r[x - 1] + r[x + 1] + up[x] + dn[x] - 4 * r[x];

                ls += l;
                ls2 += l * l;
            }
            s += ls;
            s2 += ls2;
        } else {
            s += rs;
            s2 += rs2;
        }
        n += w - 2;
    }
    return ((double)s2 - (double)s * s / n) / n;
}

static double cosines[8][32];
static pthread_once_t cosines_once = PTHREAD_ONCE_INIT;

static void cosines_init(void)
{
    for (int k = 0; k < 8; k++)
        for (int n = 0; n < 32; n++)
            cosines[k][n] = cos(M_PI / 32.0 * (n + 0.5) * k);
}

uint64_t vt_img_phash64(const uint8_t *g32)
{
    double rows[32][8], coef[64], sorted[64], med;
    uint64_t h = 0;

    pthread_once(&cosines_once, cosines_init);
    for (int y = 0; y < 32; y++)
        for (int k = 0; k < 8; k++) {
            double a = 0;

            for (int x = 0; x < 32; x++)
                a += g32[y * 32 + x] * cosines[k][x];
            rows[y][k] = a;
        }
    for (int ky = 0; ky < 8; ky++)
        for (int kx = 0; kx < 8; kx++) {
            double a = 0;

            for (int y = 0; y < 32; y++)
                a += rows[y][kx] * cosines[ky][y];
            coef[ky * 8 + kx] = a;
        }
    /* the DC term says nothing about structure: take the median of the others */
    memcpy(sorted, coef + 1, 63 * sizeof(double));
    for (int i = 1; i < 63; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double t = sorted[j];

            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    med = sorted[31];
    for (int i = 0; i < 64; i++)
        if (coef[i] > med)
            h |= 1ULL << i;
    return h;
}

int vt_img_hamming64(uint64_t a, uint64_t b)
{
    return __builtin_popcountll(a ^ b);
}

void vt_img_diff(const uint8_t *a, const uint8_t *b, size_t n, int thresh, double *mad,
                 double *changed)
{
    uint64_t sum = 0, ch = 0;
    size_t i = 0;

    /* blocks of 64 bytes with 8-bit differences and counts, which -O2 vectorises */
    for (; thresh >= 0 && thresh <= 255 && i + 64 <= n; i += 64) {
        uint32_t s = 0;
        uint8_t c = 0;

        for (int k = 0; k < 64; k++) {
            uint8_t d = (uint8_t)(a[i + k] > b[i + k] ? a[i + k] - b[i + k] : b[i + k] - a[i + k]);

            s += d;
            c += d > (uint8_t)thresh;
        }
        sum += s;
        ch += c;
    }
    for (; i < n; i++) {
        int d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];

        sum += (uint64_t)d;
        ch += d > thresh;
    }
    *mad = n ? (double)sum / (double)n : 0;
    *changed = n ? (double)ch / (double)n : 0;
}

/* vt_img_rotate_rgb and vt_img_rotate_grey, for pixels of bpp bytes. */
static uint8_t *rotate_px(const uint8_t *src, int w, int h, int stride, int bpp, int deg, int *ow,
                          int *oh)
{
    int nw = (deg == 90 || deg == 270) ? h : w, nh = (deg == 90 || deg == 270) ? w : h;
    uint8_t *dst = vt_xmalloc((size_t)nw * nh * bpp);

    for (int y = 0; y < h; y++) {
        const uint8_t *r = src + (size_t)y * stride;

        for (int x = 0; x < w; x++) {
            int dx, dy;

            switch (deg) {
            case 90: /* the left column becomes the top row */
                dx = h - 1 - y;
                dy = x;
                break;
            case 180:
                dx = w - 1 - x;
                dy = h - 1 - y;
                break;
            case 270:
                dx = y;
                dy = w - 1 - x;
                break;
            default:
                dx = x;
                dy = y;
                break;
            }
            memcpy(dst + ((size_t)dy * nw + dx) * bpp, r + (size_t)x * bpp, bpp);
        }
    }
    *ow = nw;
    *oh = nh;
    return dst;
}

uint8_t *vt_img_rotate_rgb(const uint8_t *src, int w, int h, int stride, int deg, int *ow, int *oh)
{
    return rotate_px(src, w, h, stride, 3, deg, ow, oh);
}

uint8_t *vt_img_rotate_grey(const uint8_t *src, int w, int h, int stride, int deg, int *ow, int *oh)
{
    return rotate_px(src, w, h, stride, 1, deg, ow, oh);
}

int vt_img_write_jpeg(const char *path, const uint8_t *rgb, int w, int h, int stride, int quality,
                      int64_t *bytes, char *err, size_t errlen)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    unsigned char *mem = NULL;
    unsigned long mem_n = 0;
    int rc;

    *bytes = 0;
    /* the default error handler exits; with valid RGB input and a memory destination
     * libjpeg has nothing left to fail on but allocation, which we treat like malloc */
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &mem, &mem_n);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    /* 4:4:4 chroma at high quality keeps coloured text edges clean for OCR */
    if (quality >= 90)
        for (int i = 0; i < c.num_components; i++)
            c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
    c.optimize_coding = TRUE;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * stride);

        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    rc = vt_write_file_atomic(path, mem, mem_n, err, errlen);
    if (!rc)
        *bytes = (int64_t)mem_n;
    free(mem);
    return rc;
}

/*
 * The source span under each destination pixel of one axis, as the first source pixel
 * and the share of each covered pixel in the average (exact coverage: a pixel cut by the
 * span's edge counts by the part inside). One list per axis makes the 2D filter two 1D
 * passes, so each source pixel is read once per pass.
 */
struct box_axis {
    int *first, *count;
    float *w; /* count[i] weights for dst pixel i, at w + i * max_n */
    int max_n;
};

static void box_axis_init(struct box_axis *a, int sn, int dn)
{
    double scale = (double)sn / dn;

    a->max_n = (int)ceil(scale) + 1;
    a->first = vt_xmalloc((size_t)dn * sizeof(*a->first));
    a->count = vt_xmalloc((size_t)dn * sizeof(*a->count));
    a->w = vt_xcalloc((size_t)dn * a->max_n, sizeof(*a->w));
    for (int i = 0; i < dn; i++) {
        double lo = i * scale, hi = (i + 1) * scale;
        int s0 = (int)floor(lo), n = 0;

        if (s0 >= sn)
            s0 = sn - 1;
        for (int s = s0; s < sn && s < hi && n < a->max_n; s++, n++) {
            double in = fmin(hi, s + 1.0) - fmax(lo, (double)s);

            a->w[(size_t)i * a->max_n + n] = (float)(in / scale);
        }
        a->first[i] = s0;
        a->count[i] = n;
    }
}

static void box_axis_release(struct box_axis *a)
{
    free(a->first);
    free(a->count);
    free(a->w);
}

void vt_img_resize_rgb(const uint8_t *src, int sw, int sh, size_t sstride, uint8_t *dst, int dw,
                       int dh)
{
    struct box_axis ax, ay;
    float *tmp = vt_xmalloc((size_t)sh * dw * 3 * sizeof(*tmp)); /* rows filtered along x */

    box_axis_init(&ax, sw, dw);
    box_axis_init(&ay, sh, dh);
    for (int y = 0; y < sh; y++) {
        const uint8_t *row = src + (size_t)y * sstride;
        float *out = tmp + (size_t)y * dw * 3;

        for (int x = 0; x < dw; x++) {
            const uint8_t *p = row + (size_t)ax.first[x] * 3;
            const float *w = ax.w + (size_t)x * ax.max_n;
            float r = 0, g = 0, b = 0;

            for (int k = 0; k < ax.count[x]; k++, p += 3) {
                r += w[k] * p[0];
                g += w[k] * p[1];
                b += w[k] * p[2];
            }
            out[x * 3] = r;
            out[x * 3 + 1] = g;
            out[x * 3 + 2] = b;
        }
    }
    for (int y = 0; y < dh; y++) {
        const float *w = ay.w + (size_t)y * ay.max_n;
        uint8_t *out = dst + (size_t)y * dw * 3;

        for (int x = 0; x < dw * 3; x++) {
            const float *col = tmp + (size_t)ay.first[y] * dw * 3 + x;
            float v = 0.5f;

            for (int k = 0; k < ay.count[y]; k++, col += (size_t)dw * 3)
                v += w[k] * *col;
            out[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    box_axis_release(&ax);
    box_axis_release(&ay);
    free(tmp);
}

void vt_img_small_size(int w, int h, int *sw, int *sh)
{
    /* never larger than the picture: a small frame stays as it is */
    if (w <= VT_IMG_SMALL_W) {
        *sw = w;
        *sh = h;
        return;
    }
    *sw = VT_IMG_SMALL_W;
    *sh = (int)lround((double)h * VT_IMG_SMALL_W / w);
    if (*sh < 1)
        *sh = 1;
}
