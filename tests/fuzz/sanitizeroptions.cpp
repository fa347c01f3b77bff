// SPDX-License-Identifier: GPL-3.0-or-later
// Default sanitizer options of the libFuzzer targets, so that a bare `./fuzz_x` run stops at the first report and
// knows the project's suppressions (tests/sanitizers). UBSAN_OPTIONS / ASAN_OPTIONS / LSAN_OPTIONS override them.
// allocator_may_return_null: OTF2 3.0 allocates what a corrupt count asks for (a 32 GiB members array) and reports
// the failed allocation as an error, which the loader turns into a LoadError; ASan would abort instead.
extern "C" const char* __asan_default_options()
{
    return "allocator_may_return_null=1";
}

extern "C" const char* __ubsan_default_options()
{
    return "halt_on_error=1:print_stacktrace=1:suppressions=" EXPOSURE_SANITIZERS_DIR "/ubsan.supp";
}

extern "C" const char* __lsan_default_options()
{
    return "suppressions=" EXPOSURE_SANITIZERS_DIR "/lsan.supp";
}
