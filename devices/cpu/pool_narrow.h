/* tgc_pool_isa.narrow_plane (pool_isa.h) at the vector width of the ISA
 * the including file is compiled for; included once per ISA by
 * devices/cpu/pool_isa_*.c, after pool_pairs.h (its NaN marks and -inf
 * lanes).
 *
 * MaxPool at stride 1 over a plane whose padded rows fit in a few vectors
 * (GoogLeNet's 3x3 pools on 28x28, 14x14 and 7x7 maps): for each output
 * row, the vectors holding columns -pl on are reduced over the window's
 * rows, then over the columns by taking each vector's lanes shifted one
 * per tap (the next vector's first lanes shifted in); every maximum one
 * MAXPS in the flat path's order (rows, then columns), NaN operands
 * marked as in pool_pairs.h so a plane that read one is computed again by
 * the rule. */

/* Vectors a row may take (rows of up to 4 * lanes floats with their pads). */
#define PN_MAX_VECTORS 4

/* A row's vectors v [nv] where pn_columns reads other widths than 3: the
 * vectors, then the last once more (lanes past the row, any value);
 * stored once a row. */
PP_INLINE void pn_store_row(float *lanes, const tgc_vf *v, int64_t nv, int64_t kw) {
    if (kw == 3) return; /* pn_columns shuffles */
    for (int64_t q = 0; q < nv; q++) tgc_vf_store(lanes + q * TGC_VLANES, v[q]);
    tgc_vf_store(lanes + nv * TGC_VLANES, v[nv - 1]);
}

/* Output vector i of a row from the row's vectors v [nv] (columns -pl on;
 * for kw other than 3, also in lanes by pn_store_row): lane j the maximum
 * over the kw lanes i * L + j + t, t < kw, in order. */
PP_INLINE tgc_vf pn_columns(const tgc_vf *v, const float *lanes, int64_t i, int64_t nv, int64_t kw) {
    tgc_vf m = v[i];
    if (kw == 3) { /* the next vector's first lanes by shuffles */
        tgc_vf next = i + 1 < nv ? v[i + 1] : v[i];
        m = tgc_vmax_keep(__builtin_shufflevector(v[i], next, PP_NEXT), m);
        return tgc_vmax_keep(__builtin_shufflevector(v[i], next, PP_NEXT2), m);
    }
    for (int64_t t = 1; t < kw; t++) m = tgc_vmax_keep(tgc_vf_load(lanes + i * TGC_VLANES + t), m);
    return m;
}

/* A row in one vector (the most common case, kept apart: the general
 * form below, its vectors in an array, ran GoogLeNet's 14x14 pools at 57
 * us against 37 for this one). */
PP_INLINE bool pn_plane1(const float *xp, float *yp, int64_t y_room, int64_t h, int64_t wd, int64_t kh, int64_t kw,
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
        float lanes[2 * TGC_VLANES];
        pn_store_row(lanes, &v, 1, kw);
        tgc_vf m = pn_columns(&v, lanes, 0, 1, kw);
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

/* Rows of nv vectors. */
PP_INLINE bool pn_plane(const float *xp, float *yp, int64_t y_room, int64_t h, int64_t wd, int64_t kh, int64_t kw,
                        int64_t pt, int64_t pl, int64_t oh_count, int64_t nv) {
    pp_nan nan = PP_NAN_NONE;
    int64_t nout = (wd + TGC_VLANES - 1) / TGC_VLANES; /* output vectors a row: at most nv */
    for (int64_t r = 0; r < oh_count; r++) {
        int64_t r0 = r - pt, lo = r0 < 0 ? -r0 : 0, hi = h - r0 < kh ? h - r0 : kh;
        if (hi <= lo) return false; /* a window without input rows: the rule's way */
        const float *row = xp + (r0 + lo) * wd - pl;
        tgc_vf v[PN_MAX_VECTORS];
        for (int64_t i = 0; i < nv; i++) {
            v[i] = tgc_vf_load(row + i * TGC_VLANES);
            for (int64_t k = 1; k < hi - lo; k++) {
                tgc_vf u = tgc_vf_load(row + k * wd + i * TGC_VLANES);
                nan |= PP_NAN_OF(u, u);
                v[i] = tgc_vmax_keep(u, v[i]);
            }
            v[i] = pp_inside(v[i], i * TGC_VLANES - pl, wd);
            nan |= PP_NAN_OF(v[i], v[i]);
        }
        float lanes[(PN_MAX_VECTORS + 1) * TGC_VLANES];
        pn_store_row(lanes, v, nv, kw);
        for (int64_t i = 0; i < nout; i++) {
            tgc_vf m = pn_columns(v, lanes, i, nv, kw);
            float *out = yp + r * wd + i * TGC_VLANES;
            if (r * wd + (i + 1) * TGC_VLANES <= y_room) {
                tgc_vf_store(out, m);
            } else {
                float lanes[TGC_VLANES];
                tgc_vf_store(lanes, m);
                int64_t n = wd - i * TGC_VLANES < TGC_VLANES ? wd - i * TGC_VLANES : TGC_VLANES;
                memcpy(out, lanes, (size_t)n * sizeof *out);
            }
        }
    }
    return !PP_NAN_ANY(nan);
}

/* tgc_pool_isa.narrow_plane, with the window and the vectors a row takes
 * constants in the common cases. */
static bool pn_narrow_plane(const float *xp, float *yp, int64_t y_room, int64_t h, int64_t wd, int64_t kh, int64_t kw,
                            int64_t pt, int64_t pl, int64_t oh_count) {
    int64_t nv = (wd + kw - 1 + TGC_VLANES - 1) / TGC_VLANES;
    if (nv > PN_MAX_VECTORS) return false;
    if (nv == 1 && kh == 3 && kw == 3) return pn_plane1(xp, yp, y_room, h, wd, 3, 3, pt, pl, oh_count);
    if (nv == 1) return pn_plane1(xp, yp, y_room, h, wd, kh, kw, pt, pl, oh_count);
    if (kh == 3 && kw == 3 && nv == 2) return pn_plane(xp, yp, y_room, h, wd, 3, 3, pt, pl, oh_count, 2);
    return pn_plane(xp, yp, y_room, h, wd, kh, kw, pt, pl, oh_count, nv);
}
