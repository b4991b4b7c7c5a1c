/* The FLOAT_EXPR of every row of graph/elementwise.def as text: the table
 * stringified, after its own helper macros (EW_CLIP, EW_UNIT_CLAMP, ...)
 * expand; the language's names (SEL, EXP, INFINITY, ...) stay words. */
#include "devices/cpu/jit/ew_expr.h"

#undef INFINITY

#define EWX_STR_(...) #__VA_ARGS__
#define EWX_STR(...) EWX_STR_(__VA_ARGS__)

static const char *const float_exprs[TGC_EW_COUNT] = {
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) [TGC_EW_##op] = EWX_STR(fexpr),
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) [TGC_EW_##op] = EWX_STR(fexpr),
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) [TGC_EW_##op] = EWX_STR(fexpr),
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) [TGC_EW_##op] = EWX_STR(fexpr),
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS
};

const char *tgc_ew_float_expr(tgc_ew_op op) {
    return (int)op >= 0 && op < TGC_EW_COUNT ? float_exprs[op] : NULL;
}
