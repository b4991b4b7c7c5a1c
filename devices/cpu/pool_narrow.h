/* tgc_pool_isa.narrow_plane (pool_isa.h) at the vector width of the ISA
 * the including file is compiled for; included once per ISA by
 * devices/cpu/pool_isa_*.c, after pool_pairs.h (its NaN marks and -inf
 * lanes).
 *
 * MaxPool at stride 1 over a plane whose padded rows fit in one vector
 * (GoogLeNet's 3x3 pools on 14x14 and 7x7 maps): for each output row, one
 * vector holding columns -pl .. L - pl - 1 is reduced over the window's
 * rows, then over the columns by shifting it a lane per tap; every
 * maximum one MAXPS in the flat path's order (rows, then columns), NaN
 * operands marked as in pool_pairs.h so a plane that read one is computed
 * again by the rule. */

/* v's lanes moved down by t (lane j takes lane j + t; the top lanes any value). */
PP_INLINE tgc_vf pn_shift(tgc_vf v, int64_t t) {
    float lanes[2 * TGC_VLANES];
    tgc_vf_store(lanes, v);
    tgc_vf_store(lanes + TGC_VLANES, v);
    return tgc_vf_load(lanes + t);
}

PP_INLINE bool pn_plane(const float *xp, float *yp, int64_t y_room, int64_t h, int64_t wd, int64_t kh, int64_t kw,
                        int64_t pt, int64_t pl, int64_t oh_count) {
    pp_nan nan = PP_NAN_NONE;
    for (int64_t r = 0; r < oh_count; r++) {
        int64_t r0 = r - pt, lo = r0 < 0 ? -r0 : 0, hi = h - r0 < kh ? h - r0 : kh;
        if (hi <= lo) return false; /* a window without input rows: the rule's way */
        const float *row = xp + (r0 + lo) * wd - pl;
        tgc_vf v = tgc_vf_load(row);
        for (int64_t k = 1; k < hi - lo; k++) {
            tgc_vf u = tgc_vf_load(row + k * wd);
            nan |= PP_NAN_OF(u, u);
            v = tgc_vmax_keep(u, v);
        }
        v = pp_inside(v, -pl, wd);
        nan |= PP_NAN_OF(v, v);
        tgc_vf m = v;
        if (kw == 3) {
            m = tgc_vmax_keep(__builtin_shufflevector(v, v, PP_NEXT), m);
            m = tgc_vmax_keep(__builtin_shufflevector(v, v, PP_NEXT2), m);
        } else {
            for (int64_t t = 1; t < kw; t++) m = tgc_vmax_keep(pn_shift(v, t), m);
        }
        float *out = yp + r * wd;
        if (r * wd + TGC_VLANES <= y_room) {
            tgc_vf_store(out, m);
        } else {
            float lanes[TGC_VLANES];
            tgc_vf_store(lanes, m);
            memcpy(out, lanes, (size_t)wd * sizeof *out);
        }
    }
    return !PP_NAN_ANY(nan);
}

/* tgc_pool_isa.narrow_plane, with the window a constant in the common case. */
static bool pn_narrow_plane(const float *xp, float *yp, int64_t y_room, int64_t h, int64_t wd, int64_t kh, int64_t kw,
                            int64_t pt, int64_t pl, int64_t oh_count) {
    if (kh == 3 && kw == 3) return pn_plane(xp, yp, y_room, h, wd, 3, 3, pt, pl, oh_count);
    return pn_plane(xp, yp, y_room, h, wd, kh, kw, pt, pl, oh_count);
}
