/* The LLVM-C JIT's engine (devices/cpu/jit/jit.h has the contract): one
 * LLJIT for the process, made on first use (libLLVM-14 opened then, see
 * llvm_api.h); a target machine for the host
 * CPU's name and features (so the loops use AVX2 or AVX-512 as the CPU
 * has them); per program a key, then the process's cache, then the disk
 * cache, then a compile: IR (llvm_emit.c), LLVMRunPasses "default<O3>",
 * LLVMTargetMachineEmitToMemoryBuffer for the object file, which is stored
 * on disk and added to the LLJIT (LLVMOrcLLJITAddObjectFile), then looked
 * up. Cold and cached kernels load the same way, through the object file.
 * Everything runs under one lock (target lookup and LLJIT setup are not
 * thread-safe; PyTorch's NNC serializes them too). The process's cache
 * and the LLJIT live until exit (malloc'd, not the tgc allocator: they
 * belong to no session). */
#include "devices/cpu/jit/llvm_jit.h"

#include "devices/cpu/jit/ew_expr.h"
#include "support/settings.h"

#include <llvm/Config/llvm-config.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/cpu/jit/llvm_names.h" /* last: LLVM's names as the loaded library's */

typedef struct cached_kernel {
    char *key;
    tgc_jit_fused_fn fn;
    struct cached_kernel *next;
} cached_kernel;

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static bool init_tried, init_ok;
static char init_error[256];
static LLVMOrcLLJITRef jit;
static LLVMTargetMachineRef target_machine;
static char *cpu_name, *cpu_features, *triple;
static cached_kernel *kernels;
static tgc_jit_stats stats;

bool tgc_jit_enabled(void) { return tgc_settings_current()->jit; }

tgc_jit_stats tgc_jit_get_stats(void) {
    pthread_mutex_lock(&jit_lock);
    tgc_jit_stats s = stats;
    pthread_mutex_unlock(&jit_lock);
    return s;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void set_error(char *err, size_t size, const char *fmt, ...) {
    if (err == NULL || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

/* err = what + LLVM's message; consumes e. */
static void llvm_error(char *err, size_t size, const char *what, LLVMErrorRef e) {
    char *msg = LLVMGetErrorMessage(e);
    set_error(err, size, "%s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
}

/* The LLJIT and the target machine (once). */
static bool init_llvm(void) {
    if (init_tried) return init_ok;
    init_tried = true;
    if (!tgc_llvm_load(init_error, sizeof init_error)) return false;
    LLVMInitializeX86TargetInfo(); /* LLVMInitializeNativeTarget's work, through the loaded library */
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    triple = LLVMGetDefaultTargetTriple();
    cpu_name = LLVMGetHostCPUName();
    cpu_features = LLVMGetHostCPUFeatures();
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(triple, &target, &msg) != 0) {
        set_error(init_error, sizeof init_error, "no LLVM target for %s: %s", triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return false;
    }
    target_machine = LLVMCreateTargetMachine(target, triple, cpu_name, cpu_features, LLVMCodeGenLevelAggressive,
                                             LLVMRelocPIC, LLVMCodeModelDefault);
    if (target_machine == NULL) {
        set_error(init_error, sizeof init_error, "LLVM made no target machine for %s", cpu_name);
        return false;
    }
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, LLVMOrcCreateLLJITBuilder());
    if (e != NULL) {
        llvm_error(init_error, sizeof init_error, "LLJIT", e);
        return false;
    }
    /* The process's symbols (memcpy, should code generation want one). */
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
    if (e != NULL) {
        llvm_error(init_error, sizeof init_error, "LLJIT's process symbols", e);
        return false;
    }
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
    init_ok = true;
    return true;
}

/* A growing string (malloc). */
typedef struct text {
    char *s;
    size_t n, cap;
    bool failed;
} text;

static void text_add(text *t, const char *fmt, ...) {
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s != NULL ? t->s + t->n : NULL, t->s != NULL ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->s != NULL && t->n + (size_t)n < t->cap) {
            t->n += (size_t)n;
            return;
        }
        size_t cap = (t->cap + (size_t)n + 1) * 2;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

/* Everything the object code depends on, as text: the format's version,
 * LLVM's, the CPU, the lanes, the bitcode's hash, the input kinds, and per
 * step the row, its expression text, its operands and parameters. */
static char *make_key(const tgc_jit_program *p, int lanes) {
    text t = {0};
    uint64_t functions = 0; /* the bitcode's hash: its code is in every kernel */
    for (const tgc_jit_bitcode *bc = tgc_jit_bitcodes; bc->lanes != 0; bc++)
        if (bc->lanes == lanes) functions = tgc_jit_fnv1a(0xcbf29ce484222325ull, bc->data, bc->size);
    text_add(&t, "tgc-jit 3\nllvm %s\ntriple %s\ncpu %s %s\nlanes %d\nfunctions %016" PRIx64 "\ninputs ",
             LLVM_VERSION_STRING, triple, cpu_name, cpu_features, lanes, functions);
    for (int i = 0; i < p->n_inputs; i++) text_add(&t, "%c", p->scalar[i] ? 's' : 'v');
    text_add(&t, "\n");
    for (int k = 0; k < p->n_steps; k++) {
        const tgc_jit_step *s = &p->steps[k];
        text_add(&t, "%s {%s} %d %d %a %a %a\n", tgc_ew_rows[s->row].op, tgc_ew_float_expr((tgc_ew_op)s->row), s->a,
                 s->b, (double)s->p[0], (double)s->p[1], (double)s->p[2]);
    }
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

static bool program_ok(const tgc_jit_program *p, char *err, size_t size) {
    if (p->n_steps < 1 || p->n_steps > TGC_FUSED_MAX_STEPS || p->n_inputs < 0 || p->n_inputs > TGC_FUSED_MAX_INPUTS) {
        set_error(err, size, "a program of %d steps and %d inputs", p->n_steps, p->n_inputs);
        return false;
    }
    for (int k = 0; k < p->n_steps; k++) {
        const tgc_jit_step *s = &p->steps[k];
        int limit = p->n_inputs + k;
        if (s->row < 0 || s->row >= TGC_EW_COUNT || s->a < 0 || s->a >= limit || s->b < -1 || s->b >= limit) {
            set_error(err, size, "step %d: row %d, operands %d and %d", k, s->row, s->a, s->b);
            return false;
        }
    }
    return true;
}

/* Every function of m but the kernel `name` becomes internal and always
 * inlined, and those the kernel does not call are deleted; the kernel
 * gets the host CPU's name and features, which include the bitcode's. */
static void inline_everything(LLVMContextRef ctx, LLVMModuleRef m, const char *name) {
    unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    unsigned never = LLVMGetEnumAttributeKindForName("noinline", 8);
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f != NULL; f = LLVMGetNextFunction(f)) {
        if (strcmp(LLVMGetValueName(f), name) == 0) {
            LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                    LLVMCreateStringAttribute(ctx, "target-cpu", 10, cpu_name, (unsigned)strlen(cpu_name)));
            LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                    LLVMCreateStringAttribute(ctx, "target-features", 15, cpu_features,
                                                              (unsigned)strlen(cpu_features)));
            continue;
        }
        if (LLVMIsDeclaration(f)) continue;
        LLVMSetLinkage(f, LLVMInternalLinkage);
        LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, never);
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, always, 0));
    }
    /* The functions nothing calls go before O3 sees them (most of the
     * bitcode, for a small group): until a pass deletes none. */
    for (bool deleted = true; deleted;) {
        deleted = false;
        for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f != NULL; f = next) {
            next = LLVMGetNextFunction(f);
            if (LLVMGetFirstUse(f) == NULL && strcmp(LLVMGetValueName(f), name) != 0) {
                LLVMDeleteFunction(f);
                deleted = true;
            }
        }
    }
}

/* IR for p, optimized, as object code (malloc'd into *obj). */
static bool compile_object(const tgc_jit_program *p, int lanes, const char *name, char **obj, size_t *obj_len,
                           char *err, size_t size) {
    const tgc_jit_bitcode *bc = tgc_jit_bitcodes;
    while (bc->lanes != 0 && bc->lanes != lanes) bc++;
    if (bc->lanes == 0) {
        set_error(err, size, "no JIT functions for %d lanes", lanes);
        return false;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMMemoryBufferRef bits = LLVMCreateMemoryBufferWithMemoryRange((const char *)bc->data, bc->size, "jit_funcs", 0);
    LLVMModuleRef m = NULL;
    if (LLVMParseBitcodeInContext2(ctx, bits, &m) != 0) {
        LLVMDisposeMemoryBuffer(bits);
        LLVMContextDispose(ctx);
        set_error(err, size, "the JIT's bitcode for %d lanes does not parse", lanes);
        return false;
    }
    LLVMDisposeMemoryBuffer(bits);
    LLVMSetTarget(m, triple);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(target_machine);
    char *layout_text = LLVMCopyStringRepOfTargetData(layout);
    LLVMSetDataLayout(m, layout_text);
    LLVMDisposeMessage(layout_text);
    LLVMDisposeTargetData(layout);
    bool ok = tgc_jit_emit_fused(ctx, m, name, p, lanes, err, size);
    if (ok) inline_everything(ctx, m, name);
    char *msg = NULL;
    if (ok && LLVMVerifyModule(m, LLVMReturnStatusAction, &msg) != 0) {
        set_error(err, size, "the generated IR does not verify: %s", msg ? msg : "");
        ok = false;
    }
    LLVMDisposeMessage(msg);
    msg = NULL;
    if (ok) {
        LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
        LLVMErrorRef e = LLVMRunPasses(m, "default<O3>", target_machine, opts);
        LLVMDisposePassBuilderOptions(opts);
        if (e != NULL) {
            llvm_error(err, size, "LLVM's O3 pipeline", e);
            ok = false;
        }
    }
    const char *dump = tgc_settings_current()->jit_dump; /* a folder: the optimized IR of each kernel compiled */
    if (ok && dump != NULL) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s.ll", dump, name) < (int)sizeof path) LLVMPrintModuleToFile(m, path, NULL);
    }
    LLVMMemoryBufferRef buf = NULL;
    if (ok && LLVMTargetMachineEmitToMemoryBuffer(target_machine, m, LLVMObjectFile, &msg, &buf) != 0) {
        set_error(err, size, "LLVM's code generation: %s", msg ? msg : "");
        ok = false;
    }
    LLVMDisposeMessage(msg);
    if (ok) {
        *obj_len = LLVMGetBufferSize(buf);
        *obj = malloc(*obj_len > 0 ? *obj_len : 1);
        if (*obj == NULL) {
            set_error(err, size, "out of memory for %zu bytes of object code", *obj_len);
            ok = false;
        } else {
            memcpy(*obj, LLVMGetBufferStart(buf), *obj_len);
        }
    }
    if (buf != NULL) LLVMDisposeMemoryBuffer(buf);
    LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
    return ok;
}

/* Adds the object to the LLJIT and finds `name` in it. */
static tgc_jit_fused_fn link_object(const char *name, const char *obj, size_t obj_len, char *err, size_t size) {
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, obj_len, name);
    LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(jit, LLVMOrcLLJITGetMainJITDylib(jit), buf);
    if (e != NULL) {
        llvm_error(err, size, "LLJIT could not add the object", e);
        return NULL;
    }
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(jit, &addr, name);
    if (e != NULL) {
        llvm_error(err, size, "LLJIT could not link the kernel", e);
        return NULL;
    }
    tgc_jit_fused_fn fn;
    uintptr_t a = (uintptr_t)addr;
    memcpy(&fn, &a, sizeof fn); /* an address from the JIT, as a function pointer */
    return fn;
}

static tgc_jit_fused_fn kernel_locked(const tgc_jit_program *p, int lanes, char *err, size_t size) {
    if (!init_llvm()) {
        set_error(err, size, "%s", init_error);
        return NULL;
    }
    if (!program_ok(p, err, size)) return NULL;
    char *key = make_key(p, lanes);
    if (key == NULL) {
        set_error(err, size, "out of memory for the kernel's key");
        return NULL;
    }
    for (cached_kernel *c = kernels; c != NULL; c = c->next)
        if (strcmp(c->key, key) == 0) {
            stats.memory_hits++;
            free(key);
            return c->fn;
        }
    uint64_t h1 = tgc_jit_fnv1a(0xcbf29ce484222325ull, key, strlen(key));
    uint64_t h2 = tgc_jit_fnv1a(0x84222325cbf29ce4ull, key, strlen(key));
    char hex[40], name[64];
    snprintf(hex, sizeof hex, "%016" PRIx64 "%016" PRIx64, h1, h2);
    snprintf(name, sizeof name, "tgc_fused_%s", hex);

    char *obj = NULL;
    size_t obj_len = 0;
    bool rejected = false;
    tgc_jit_fused_fn fn = NULL;
    double t0 = now_seconds();
    if (tgc_jit_disk_load(hex, key, &obj, &obj_len, &rejected)) {
        fn = link_object(name, obj, obj_len, err, size);
        if (fn != NULL) {
            stats.disk_loads++;
            stats.load_seconds += now_seconds() - t0;
        }
    } else {
        if (rejected) stats.disk_rejected++;
        if (compile_object(p, lanes, name, &obj, &obj_len, err, size)) {
            tgc_jit_disk_store(hex, key, obj, obj_len);
            fn = link_object(name, obj, obj_len, err, size);
        }
        if (fn != NULL) {
            stats.compiled++;
            stats.compile_seconds += now_seconds() - t0;
        }
    }
    free(obj);
    cached_kernel *c = fn != NULL ? malloc(sizeof *c) : NULL;
    if (c == NULL) {
        if (fn == NULL) stats.failures++;
        free(key);
        return fn; /* out of memory for the entry: a later call's link fails on the duplicate name, and its
                    * caller falls back to the interpreter */
    }
    c->key = key;
    c->fn = fn;
    c->next = kernels;
    kernels = c;
    return fn;
}

tgc_jit_fused_fn tgc_jit_fused_kernel(const tgc_jit_program *p, int lanes, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (!tgc_jit_enabled()) return NULL;
    pthread_mutex_lock(&jit_lock);
    tgc_jit_fused_fn fn = kernel_locked(p, lanes, err, err_size);
    pthread_mutex_unlock(&jit_lock);
    return fn;
}
