/* The check of a refused model: every problem at once.
 *
 * The importer refuses a model for what it can tell from the file alone:
 * an op, an attribute or a dtype tgc lacks. What only inference tells (an
 * attribute value such as Pad's mode "wrap", Resize's coordinate modes, an
 * If whose branches disagree in rank) would otherwise show only once those
 * are fixed. So a refused model is built anyway (onnx_build.c), each
 * refused node as _Unsupported (graph/ops_internal.c): inference checks
 * every other node, inside subgraphs too, and skips the nodes that read a
 * refused one, as after any failed node. Its errors join the importer's,
 * minus _Unsupported's own, which repeat the importer's. */
#include "onnx/onnx_import.h"

#include "support/diag.h"

#include <string.h>

void tgc_onnx_probe(const tgc_onnx_doc *doc, const char *onnx_path, tgc_diags *diags) {
    tgc_diags *scratch = tgc_diags_create();
    if (scratch == NULL) return; /* the check is a courtesy: the model is refused either way */
    tgc_load_limits limits = tgc_load_limits_of(NULL);
    tgc_graph *g = NULL;
    tgc_onnx_build(doc, &limits, false, scratch, &g);
    tgc_graph_free(g);
    for (size_t i = 0; i < tgc_diags_count(scratch); i++) {
        const char *rule = tgc_diag_rule(scratch, i);
        if (tgc_diag_severity(scratch, i) != TGC_SEV_ERROR || strcmp(rule, "unsupported-op") == 0) continue;
        tgc_diag_error(diags, onnx_path, (tgc_srcpos){0, 0}, rule, "%s", tgc_diag_message(scratch, i));
    }
    tgc_diags_free(scratch);
}
