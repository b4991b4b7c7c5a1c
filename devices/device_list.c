/* The devices this machine offers, for `tgc devices`: every backend's, in
 * kind order. */
#include "tgc.h"

#include "devices/backend.h"

int tgc_devices_list(tgc_device_info *out, int max) {
    int n = 0;
    for (int k = 0; k < tgc_backend_count(); k++) {
        int listed = tgc_backend_get(k)->list(out + n, max - n);
        n += listed < max - n ? listed : max - n;
    }
    return n;
}
