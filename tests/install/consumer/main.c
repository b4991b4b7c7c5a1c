/* A C user of an installed tgc: one eager Add on the cpu, checked against
 * the sums written here; prints the library's version. Built by
 * tests/install/test_install.sh with pkg-config and with find_package(tgc). */
#include <tgc.h>

#include <stdio.h>

int main(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = NULL;
    tgc_tensor *a = NULL, *b = NULL, *y = NULL;
    int rc = 1;
    if (tgc_eager_create("cpu", NULL, diags, &e) == TGC_OK &&
        tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1, 2, 3}, &a) == TGC_OK &&
        tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){10, 20, 30}, &b) == TGC_OK) {
        tgc_tensor *in[] = {a, b};
        if (tgc_eager_run(e, "Add", NULL, 0, in, 2, NULL, &y, 1, diags) == TGC_OK) {
            const float *v = tgc_tensor_data(y);
            rc = v[0] == 11 && v[1] == 22 && v[2] == 33 ? 0 : 1;
        }
    }
    tgc_diags_print(diags, stderr);
    printf("tgc %s: %s\n", TGC_VERSION_STRING, rc == 0 ? "11 22 33" : "wrong sums");
    tgc_tensor_release(y);
    tgc_tensor_release(a);
    tgc_tensor_release(b);
    tgc_eager_free(e);
    tgc_diags_free(diags);
    return rc;
}
