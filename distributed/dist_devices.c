/* tgc_distributed_devices: every rank's devices (tgc_devices_list),
 * gathered with one exchange through the transport, for `tgc devices`
 * under mpirun. */
#include "tgc.h"

#include "distributed/transport.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <string.h>

#define PER_RANK 17 /* cpu and 16 gpus */

typedef struct rank_devices {
    int32_t n;
    tgc_device_info info[PER_RANK];
} rank_devices;

int tgc_distributed_devices(tgc_device_info *out, int *task, int max, tgc_diags *diags) {
    int size = tgc_dist_size();
    rank_devices *mine = tgc_calloc(1, sizeof *mine);
    rank_devices *all = tgc_calloc((size_t)size, sizeof *all);
    if (mine == NULL || all == NULL) {
        tgc_free(mine);
        tgc_free(all);
        tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "out-of-memory", "no memory to list the devices");
        return -1;
    }
    mine->n = tgc_devices_list(mine->info, PER_RANK);
    char err[300] = "";
    double timeout = tgc_dist_peer_timeout() > 0 ? tgc_dist_peer_timeout() : 1e9;
    int n = 0;
    if (tgc_dist_allgather(mine, sizeof *mine, all, timeout, err, sizeof err) != TGC_OK) {
        tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "mpi-failed", "rank %d: cannot gather the devices: %s",
                       tgc_dist_rank(), err);
        n = -1;
    }
    for (int r = 0; n >= 0 && r < size; r++)
        for (int i = 0; i < all[r].n && i < PER_RANK && n < max; i++) {
            out[n] = all[r].info[i];
            task[n++] = r;
        }
    tgc_free(mine);
    tgc_free(all);
    return n;
}
