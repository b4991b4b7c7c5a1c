/* The GEMM kernel's tile per layer shape (devices/opencl/gemm_tiles.h). */
#include "devices/opencl/gemm_tiles.h"

#include "devices/opencl/cl_program.h"
#include "devices/opencl/cl_sources.h"
#include "support/alloc.h"
#include "support/cache_dir.h"
#include "support/strmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* c's file, or "" without a cache folder. */
static void tiles_path(const tgc_cl_device *c, char *out, size_t size) {
    char dir[1100];
    out[0] = '\0';
    const tgc_cl_source *nn = tgc_cl_source_named("nn.cl");
    if (nn == NULL || !tgc_cache_dir(NULL, dir, sizeof dir)) return;
    snprintf(out, size, "%s/gemm-tiles-%016" PRIx64 ".txt", dir, tgc_cl_device_key(c, nn->text, nn->size));
}

static void key_of(const tgc_cl_tile_shape *s, char *out, size_t size) {
    snprintf(out, size, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, s->b_kind, s->m,
             s->n, s->k, s->kk, s->z);
}

/* Under c->lock. */
static void keep(tgc_cl_device *c, const tgc_cl_tile_shape *s, int tile) {
    if (c->tiles == NULL && (c->tiles = tgc_calloc(1, sizeof *c->tiles)) == NULL) return;
    char key[160];
    key_of(s, key, sizeof key);
    (void)tgc_strmap_put(c->tiles, key, tile); /* out of memory: the shape is not kept, and is tuned again */
}

void tgc_cl_tiles_load(tgc_cl_device *c) {
    char path[1200];
    tiles_path(c, path, sizeof path);
    FILE *f = path[0] != '\0' ? fopen(path, "r") : NULL;
    if (f == NULL) return;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        tgc_cl_tile_shape s;
        int tile = 0;
        char end = 0;
        if (sscanf(line, "%" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %d%c", &s.b_kind,
                   &s.m, &s.n, &s.k, &s.kk, &s.z, &tile, &end) == 8 &&
            end == '\n' && (tile == 32 || tile == 64))
            keep(c, &s, tile);
    }
    fclose(f);
}

int tgc_cl_tiles_get(tgc_cl_device *c, const tgc_cl_tile_shape *s) {
    char key[160];
    key_of(s, key, sizeof key);
    pthread_mutex_lock(&c->lock);
    int32_t tile = c->tiles != NULL ? tgc_strmap_get(c->tiles, key) : -1;
    pthread_mutex_unlock(&c->lock);
    return tile == 32 || tile == 64 ? tile : 0;
}

void tgc_cl_tiles_put(tgc_cl_device *c, const tgc_cl_tile_shape *s, int tile) {
    char path[1200], key[160];
    tiles_path(c, path, sizeof path);
    key_of(s, key, sizeof key);
    pthread_mutex_lock(&c->lock);
    keep(c, s, tile);
    FILE *f = path[0] != '\0' ? fopen(path, "a") : NULL; /* one short line: appended whole */
    if (f != NULL) {
        fprintf(f, "%s %d\n", key, tile);
        fclose(f);
    }
    pthread_mutex_unlock(&c->lock);
}

void tgc_cl_tiles_release(tgc_cl_device *c) {
    if (c->tiles == NULL) return;
    tgc_strmap_release(c->tiles);
    tgc_free(c->tiles);
    c->tiles = NULL;
}
