/* MaxPool's rule on float32, in one place for the paths that compute it
 * without Indices (kernels_pool.c's rows, pool_padded.c's planes,
 * pool_max_rows.c's rows then columns): the running maximum e takes v when
 * v is greater or a NaN, so a NaN wins and ties keep the maximum already
 * there; ONNX's Max rule (graph/elementwise.def's Max row). Written with
 * the NaN test first: GCC then makes one compare-and-select of the pair
 * and one NaN test (pool_max_rows.c's 3x3 by 2 on [1, 64, 111, 111]: 156
 * -> 135 us against the "greater or NaN" form). Private to the cpu
 * kernels. */
#ifndef TGC_DEVICES_CPU_POOL_MAX_RULE_H
#define TGC_DEVICES_CPU_POOL_MAX_RULE_H

#define TGC_POOL_MAX_F32(v, e) ((v) != (v) ? (v) : (v) > (e) ? (v) : (e))

/* The same rule lane by lane on GCC vector-extension floats (C has no
 * vector ?:): a select of v where v is a NaN or greater, else e. VI is the
 * integer vector type of the same lanes (comparisons give -1 or 0). */
#define TGC_POOL_MAX_VF(VF, VI, v, e) ({                                              \
    VF pm_v_ = (v), pm_e_ = (e);                                                     \
    VI pm_m_ = (pm_v_ != pm_v_) | (pm_v_ > pm_e_);                                    \
    (VF)(((VI)pm_v_ & pm_m_) | ((VI)pm_e_ & ~pm_m_)); })

#endif
