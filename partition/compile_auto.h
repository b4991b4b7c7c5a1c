/* Automatic placement inside the compile driver (partition/compile.c),
 * private to partition/: what tgc_compile_on does beyond one placer run
 * when tgc_compile_options.auto_placement is set. */
#ifndef TGC_PARTITION_COMPILE_AUTO_H
#define TGC_PARTITION_COMPILE_AUTO_H

#include "partition/compile.h"

/* The device list as tgc_graph_optimize reads it ("cpu0,gpu0": which kinds
 * run the graph; fusion only where every kind has the fused kernels) into
 * buf[0..size). */
void tgc_compile_list_string(const tgc_placer_device *devices, int n, char *buf, size_t size);

/* Places out->g over out->devices under automatic placement (po, with a
 * its options) and partitions it when opts->partition: where no split
 * fits, heavy layers are cut into pieces (tgc_graph_split_heavy; the cut
 * graph becomes out->g, owned as out->optimized), and where the exact
 * static plan (opts->memory_misses) finds a device's partition over its
 * room, placement runs again with that partition's nodes charged the
 * shortfall on that device (at most 6 rounds; compile_auto.c has the
 * details). a's charge fields are used and cleared. Diagnostics are the
 * last try's. TGC_OK, TGC_ERR_INVALID (nothing fits, with over-memory
 * messages) or TGC_ERR_NOMEM. */
tgc_status tgc_compile_place_auto(tgc_compiled *out, const tgc_compile_options *opts, const tgc_placer_options *po,
                                  tgc_placer_auto *a, tgc_diags *diags);

/* Over devices of several kinds (one process), g compiled again optimized
 * for each kind alone and placed over the whole list; a candidate whose
 * forecast beats *out's by 2% replaces it (moved into *out), with a note
 * "placement-one-kind" in diags. TGC_OK (whether or not one won) or
 * TGC_ERR_NOMEM. */
tgc_status tgc_compile_one_kind(const tgc_graph *g, const tgc_compile_options *opts, tgc_diags *diags,
                                tgc_compiled *out);

#endif
