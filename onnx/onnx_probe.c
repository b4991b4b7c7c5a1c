/* The check of a refused model: every problem at once.
 *
 * The importer refuses a model for what it can tell from the file alone:
 * an op, an attribute or a dtype tgc lacks. What only inference tells (an
 * attribute value such as Pad's mode "wrap", Resize's coordinate modes, an
 * If whose branches disagree in rank) would otherwise show only once those
 * are fixed. So a refused model is written anyway, each refused node as
 * _Unsupported (graph/ops_internal.c), into a temporary folder, and loaded:
 * inference checks every other node, inside subgraphs too, and skips the
 * nodes that read a refused one, as after any failed node. Its errors join
 * the importer's, on the model's path (the temporary file goes), minus
 * _Unsupported's own, which repeat the importer's. */
#include "onnx/onnx_import.h"

#include "support/diag.h"
#include "support/settings.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Removes dir/probe.yaml, the flat folder dir/probe_weights/ and dir. */
static void remove_probe(const char *dir) {
    char path[2048 + 32];
    snprintf(path, sizeof path, "%s/probe_weights", dir);
    DIR *d = opendir(path);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char file[sizeof path + 256];
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            unlink(file);
        }
        closedir(d);
        rmdir(path);
    }
    snprintf(path, sizeof path, "%s/probe.yaml", dir);
    unlink(path);
    rmdir(dir);
}

void tgc_onnx_probe(const tgc_onnx_doc *doc, const char *onnx_path, tgc_diags *diags) {
    const char *tmp = tgc_settings_current()->tmpdir;
    char dir[2048];
    bool usable = tmp != NULL && strlen(tmp) < sizeof dir - 32;
    snprintf(dir, sizeof dir, "%s/tgc-probe-XXXXXX", usable ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) return; /* the check is a courtesy: the model is refused either way */
    char yaml[sizeof dir + 16];
    snprintf(yaml, sizeof yaml, "%s/probe.yaml", dir);
    tgc_diags *scratch = tgc_diags_create();
    tgc_graph *g = NULL;
    if (scratch != NULL && tgc_onnx_write(doc, yaml, scratch) == TGC_OK) {
        size_t before = tgc_diags_count(scratch);
        tgc_graph_load(yaml, scratch, &g);
        tgc_graph_free(g);
        for (size_t i = before; i < tgc_diags_count(scratch); i++) {
            const char *rule = tgc_diag_rule(scratch, i);
            if (tgc_diag_severity(scratch, i) != TGC_SEV_ERROR || strcmp(rule, "unsupported-op") == 0) continue;
            tgc_diag_error(diags, onnx_path, (tgc_srcpos){0, 0}, rule, "%s", tgc_diag_message(scratch, i));
        }
    }
    tgc_diags_free(scratch);
    remove_probe(dir);
}
