/* `tgc run --input-dir DIR`: the steps' inputs, one entry of DIR a step.
 *
 * An entry is either a folder holding NAME.npy for each graph input the
 * stream feeds, or a file STEM.npy, the value of the one graph input the
 * stream feeds (a graph with one input not given by --input). Entries run
 * in the byte order of their stems (the name less ".npy"), and a step's
 * outputs go to OUTPUT_DIR/STEM/. Names starting with '.' are skipped.
 *
 * Example usage:
 *     tgc_input_dir in;
 *     if (tgc_input_dir_list("inputs", 1, &in) != TGC_EXIT_OK) ...
 *     // in.stems[i], in.is_folder[i]; tgc_input_dir_path(&in, i, "x", buf, sizeof buf)
 *     tgc_input_dir_free(&in);
 */
#ifndef TGC_TOOLS_RUN_INPUTS_H
#define TGC_TOOLS_RUN_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tgc_input_dir {
    const char *dir;
    int count;
    char **stems;    /* sorted, unique */
    bool *is_folder; /* stem i is a folder (else STEM.npy) */
} tgc_input_dir;

/* Lists `dir` into *out (dir borrowed). `streamed` is the number of graph
 * inputs each step feeds from it: a .npy entry needs exactly one. Errors
 * (printed to stderr, exit code returned): DIR unreadable, empty, an entry
 * neither a folder nor a .npy file, two entries with one stem, .npy
 * entries for a graph that streams more than one input. */
int tgc_input_dir_list(const char *dir, int streamed, tgc_input_dir *out);

/* The file feeding graph input `input` in step i: DIR/STEM.npy for a file
 * entry, DIR/STEM/INPUT.npy for a folder (the input's name escaped as
 * output files' are, tgc_file_stem: "onnx::Flatten_0" is
 * "onnx%3A%3AFlatten_0.npy"). NULL when it does not fit in buf. */
const char *tgc_input_dir_path(const tgc_input_dir *in, int i, const char *input, char *buf, size_t size);

void tgc_input_dir_free(tgc_input_dir *in);

#endif
