/*
 * Text that changes inside a shot: a slide that reveals its bullets one by one, typed text,
 * a lower third, kinetic titles. One keyframe per shot gives OCR one state of such text;
 * this module finds the other states from the text grid keyframe.c measures on every
 * analysed frame (shotdetect.h's vt_sd_feat.text: edge pixels per cell), so the stage can
 * take one more frame for each. Pure, like shotdetect.c: the unit tests drive it with
 * synthetic grids.
 */
#ifndef VT_TEXTCHANGE_H
#define VT_TEXTCHANGE_H

#include "visual/shotdetect.h"

#include <stddef.h>

/* At most this many extra frames in one shot, whatever its length. */
#define VT_TC_MAX_EXTRA 12

/*
 * The extra frames of shot s (one of vt_sd_detect's over f): analysed frames, each the
 * moment a new state of the shot's text settled, in time order, into out (room for
 * VT_TC_MAX_EXTRA). Returns their number: one per state held about half a second, at most
 * two per second of the shot's stable part and VT_TC_MAX_EXTRA. The shot's own chosen
 * frame is never among them.
 */
size_t vt_tc_extra(const struct vt_sd_feat *f, const struct vt_sd_shot *s, size_t *out);

/*
 * The edge pixels of a grey image (w x h, stride ls) per cell of the text grid into text:
 * pixels whose step to the next one in the row is at least a stroke's, on every other row.
 * w and h are multiples of VT_SD_TEXT_W and 2 * VT_SD_TEXT_H.
 */
void vt_tc_grid(const uint8_t *grey, int w, int h, int ls, uint8_t *text);

#endif
