/* Device names (backend.h): [/task:T/]PREFIX[N], the prefix a backend's.
 * The one place a device name is read or written. */
#include "devices/backend.h"

#include <stdio.h>
#include <string.h>

/* Reads a "/task:T/" prefix (T without leading zeros, at most 99999) off
 * s[0..len): its length, 0 when there is none, -1 when it is malformed. */
static int task_prefix(const char *s, size_t len, int *task) {
    *task = 0;
    if (len < 6 || strncmp(s, "/task:", 6) != 0) return 0;
    size_t i = 6;
    if (i < len && s[i] == '0' && i + 1 < len && s[i + 1] != '/') return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (*task > 9999) return -1;
        *task = *task * 10 + (s[i] - '0');
    }
    if (i == 6 || i >= len || s[i] != '/') return -1;
    return (int)i + 1;
}

bool tgc_device_id_parse(const char *s, size_t len, tgc_device_id *out, bool *partial) {
    int skip = task_prefix(s, len, &out->task);
    if (skip < 0) return false;
    s += skip;
    len -= (size_t)skip;
    size_t letters = 0;
    while (letters < len && s[letters] >= 'a' && s[letters] <= 'z') letters++;
    out->kind = tgc_backend_by_prefix(s, letters);
    if (out->kind < 0) return false;
    out->index = 0;
    if (partial != NULL) *partial = letters == len;
    if (letters == len) return true;
    if (s[letters] == '0' && len > letters + 1) return false; /* no leading zeros */
    for (size_t i = letters; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || out->index > 9999) return false;
        out->index = out->index * 10 + (s[i] - '0');
    }
    return true;
}

const char *tgc_device_id_name(tgc_device_id d, char *buf, size_t size) {
    const tgc_backend *b = tgc_backend_get(d.kind);
    const char *prefix = b != NULL ? b->prefix : "?";
    if (d.task > 0) snprintf(buf, size, "/task:%d/%s%d", d.task, prefix, d.index);
    else snprintf(buf, size, "%s%d", prefix, d.index);
    return buf;
}

bool tgc_device_spec_valid(const char *spec) {
    tgc_device_id d;
    size_t len = strlen(spec);
    return len < 32 && tgc_device_id_parse(spec, len, &d, NULL);
}

const char *tgc_device_name_forms(char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0, n = tgc_backend_count(); k < n && used < size; k++) {
        const char *p = tgc_backend_get(k)->prefix;
        used += (size_t)snprintf(buf + used, size - used, "%s%s, %sN", k ? ", " : "", p, p);
    }
    return buf;
}

const char *tgc_device_name_canonical(const char *s, size_t len, char *buf, size_t size) {
    tgc_device_id d;
    if (tgc_device_id_parse(s, len, &d, NULL)) return tgc_device_id_name(d, buf, size);
    snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), s);
    return buf;
}

const char *tgc_default_device_list(void) { return tgc_backend_get(tgc_backend_host_kind())->prefix; }
