/* LLVM 14's C API as the JIT uses it, loaded at run time (private to
 * devices/cpu/jit/llvm_*.c). libLLVM-14 is opened with dlopen(RTLD_LOCAL)
 * on the JIT's first use instead of being linked: the OpenCL driver (PoCL)
 * brings its own LLVM (15 on Debian 12) into the same process, and two
 * LLVMs whose C++ symbols share names must not both be global, or one
 * calls into the other (a crash in PoCL's kernel compiler, seen with
 * libLLVM-14 linked). Each function is a pointer in tgc_llvm, named as
 * the API names it; llvm_names.h maps the API's names onto them. */
#ifndef TGC_DEVICES_CPU_JIT_LLVM_API_H
#define TGC_DEVICES_CPU_JIT_LLVM_API_H

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdbool.h>
#include <stddef.h>

/* Every function the JIT calls (x86-64's target: the native one). */
#define TGC_LLVM_FUNCTIONS(X) \
    X(LLVMAddAttributeAtIndex) \
    X(LLVMAddFunction) \
    X(LLVMAddIncoming) \
    X(LLVMAppendBasicBlockInContext) \
    X(LLVMBuildAdd) \
    X(LLVMBuildAlloca) \
    X(LLVMBuildAnd) \
    X(LLVMBuildBitCast) \
    X(LLVMBuildCall2) \
    X(LLVMBuildCondBr) \
    X(LLVMBuildFAdd) \
    X(LLVMBuildFCmp) \
    X(LLVMBuildFDiv) \
    X(LLVMBuildFMul) \
    X(LLVMBuildFNeg) \
    X(LLVMBuildFSub) \
    X(LLVMBuildGEP2) \
    X(LLVMBuildICmp) \
    X(LLVMBuildInsertElement) \
    X(LLVMBuildLoad2) \
    X(LLVMBuildOr) \
    X(LLVMBuildPhi) \
    X(LLVMBuildRetVoid) \
    X(LLVMBuildSelect) \
    X(LLVMBuildShuffleVector) \
    X(LLVMBuildStore) \
    X(LLVMConstInt) \
    X(LLVMConstNull) \
    X(LLVMConstReal) \
    X(LLVMConstVector) \
    X(LLVMContextCreate) \
    X(LLVMContextDispose) \
    X(LLVMCopyStringRepOfTargetData) \
    X(LLVMCreateBuilderInContext) \
    X(LLVMCreateEnumAttribute) \
    X(LLVMCreateMemoryBufferWithMemoryRange) \
    X(LLVMCreateMemoryBufferWithMemoryRangeCopy) \
    X(LLVMCreatePassBuilderOptions) \
    X(LLVMCreateStringAttribute) \
    X(LLVMCreateTargetDataLayout) \
    X(LLVMCreateTargetMachine) \
    X(LLVMDeleteFunction) \
    X(LLVMDisposeBuilder) \
    X(LLVMDisposeErrorMessage) \
    X(LLVMDisposeMemoryBuffer) \
    X(LLVMDisposeMessage) \
    X(LLVMDisposeModule) \
    X(LLVMDisposePassBuilderOptions) \
    X(LLVMDisposeTargetData) \
    X(LLVMFloatTypeInContext) \
    X(LLVMFunctionType) \
    X(LLVMGetBufferSize) \
    X(LLVMGetBufferStart) \
    X(LLVMGetDefaultTargetTriple) \
    X(LLVMGetEnumAttributeKindForName) \
    X(LLVMGetErrorMessage) \
    X(LLVMGetFirstFunction) \
    X(LLVMGetFirstUse) \
    X(LLVMGetHostCPUFeatures) \
    X(LLVMGetHostCPUName) \
    X(LLVMGetNamedFunction) \
    X(LLVMGetNextFunction) \
    X(LLVMGetParam) \
    X(LLVMGetTargetFromTriple) \
    X(LLVMGetUndef) \
    X(LLVMGetValueName) \
    X(LLVMInitializeX86AsmPrinter) \
    X(LLVMInitializeX86Target) \
    X(LLVMInitializeX86TargetInfo) \
    X(LLVMInitializeX86TargetMC) \
    X(LLVMInt32TypeInContext) \
    X(LLVMInt64TypeInContext) \
    X(LLVMIsDeclaration) \
    X(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess) \
    X(LLVMOrcCreateLLJIT) \
    X(LLVMOrcCreateLLJITBuilder) \
    X(LLVMOrcJITDylibAddGenerator) \
    X(LLVMOrcLLJITAddObjectFile) \
    X(LLVMOrcLLJITGetGlobalPrefix) \
    X(LLVMOrcLLJITGetMainJITDylib) \
    X(LLVMOrcLLJITLookup) \
    X(LLVMParseBitcodeInContext2) \
    X(LLVMPointerType) \
    X(LLVMPositionBuilderAtEnd) \
    X(LLVMPrintModuleToFile) \
    X(LLVMRemoveEnumAttributeAtIndex) \
    X(LLVMRunPasses) \
    X(LLVMSetAlignment) \
    X(LLVMSetDataLayout) \
    X(LLVMSetLinkage) \
    X(LLVMSetTarget) \
    X(LLVMTargetMachineEmitToMemoryBuffer) \
    X(LLVMVectorType) \
    X(LLVMVerifyModule) \
    X(LLVMVoidTypeInContext)

typedef struct tgc_llvm_api {
#define TGC_LLVM_MEMBER(f) __typeof__(f) *f;
    TGC_LLVM_FUNCTIONS(TGC_LLVM_MEMBER)
#undef TGC_LLVM_MEMBER
} tgc_llvm_api;

extern tgc_llvm_api tgc_llvm;

/* Opens libLLVM-14 and finds every function (once; the caller holds the
 * JIT's lock). False, with the reason in err, when the library or a
 * function is missing: the JIT is then unavailable. */
bool tgc_llvm_load(char *err, size_t err_size);

#endif
