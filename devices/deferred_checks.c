/* Checks a kernel leaves for the step's end (devices/deferred_checks.h). */
#include "devices/deferred_checks.h"

#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

void tgc_deferred_checks_init(tgc_deferred_checks *dc) {
    pthread_mutex_init(&dc->lock, NULL);
    dc->items = NULL;
    dc->count = 0;
    dc->blocks = NULL;
    dc->n_blocks = 0;
    dc->block_bytes = 0;
}

void tgc_deferred_checks_release(tgc_deferred_checks *dc) {
    for (int i = 0; i < dc->n_blocks; i++) tgc_free(dc->blocks[i]);
    tgc_free(dc->blocks);
    dc->blocks = NULL;
    dc->n_blocks = 0;
    tgc_free(dc->items);
    dc->items = NULL;
    dc->count = 0;
    pthread_mutex_destroy(&dc->lock);
}

int32_t *tgc_deferred_checks_add(tgc_deferred_checks *dc, const tgc_node *node, const char *device,
                                 const char *reason) {
    int32_t *flag = NULL;
    pthread_mutex_lock(&dc->lock);
    if (dc->items == NULL) dc->items = tgc_calloc(TGC_DEFERRED_CHECKS, sizeof *dc->items);
    if (dc->items != NULL && dc->count < TGC_DEFERRED_CHECKS) {
        tgc_deferred_check *c = &dc->items[dc->count++];
        c->flag = 0;
        c->node = node;
        c->device = device;
        snprintf(c->reason, sizeof c->reason, "%s", reason);
        flag = &c->flag;
    }
    pthread_mutex_unlock(&dc->lock);
    return flag;
}

bool tgc_deferred_checks_keep(tgc_deferred_checks *dc, void *block, size_t bytes) {
    bool kept = false;
    pthread_mutex_lock(&dc->lock);
    if (dc->blocks == NULL) dc->blocks = tgc_calloc(TGC_DEFERRED_BLOCKS, sizeof *dc->blocks);
    if (dc->blocks != NULL && dc->n_blocks < TGC_DEFERRED_BLOCKS && bytes <= TGC_DEFERRED_BLOCK_BYTES - dc->block_bytes) {
        dc->blocks[dc->n_blocks++] = block;
        dc->block_bytes += bytes;
        kept = true;
    }
    pthread_mutex_unlock(&dc->lock);
    return kept;
}

const tgc_deferred_check *tgc_deferred_checks_failed(tgc_deferred_checks *dc) {
    const tgc_deferred_check *failed = NULL;
    pthread_mutex_lock(&dc->lock);
    for (int i = 0; i < dc->count && failed == NULL; i++)
        if (dc->items[i].flag != 0) failed = &dc->items[i];
    pthread_mutex_unlock(&dc->lock);
    return failed;
}
