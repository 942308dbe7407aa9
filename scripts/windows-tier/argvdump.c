/* argvdump: print the arguments this program received, as each Windows parser reads them.
 *
 * One line on stdout, UTF-8 JSON, every string given as the hex of its UTF-16LE code
 * units (4 hex digits per unit, so lone surrogates and NUL-free controls survive):
 *
 *   argvdump {"cmdline":"...","crt":[...],"ucrt":[...],"shell32":[...]}
 *
 *   cmdline  GetCommandLineW(), exactly as CreateProcess handed it over;
 *   crt      the wargv this program's startup code built (mingw-w64 links msvcrt.dll);
 *   ucrt     ucrtbase.dll's parse of the same line (_configure_wide_argv), the C runtime
 *            of programs built with Visual Studio 2015 and later; absent when the DLL is;
 *   shell32  CommandLineToArgvW(GetCommandLineW()).
 *
 * Output goes through WriteFile on the standard output handle: no CRT text-mode or code
 * page translation, and nothing is buffered when a caller waits on the process.
 */
#include <windows.h>
#include <shellapi.h>
#include <stdio.h>
#include <string.h>

static void out(const char *text, DWORD len) {
    HANDLE h = GetStdHandle(STD_OUTPUT_HANDLE);
    DWORD done = 0;
    while (len > 0 && WriteFile(h, text, len, &done, NULL) && done > 0) {
        text += done;
        len -= done;
    }
}

static void put(const char *text) { out(text, (DWORD)strlen(text)); }

static void put_hex(const wchar_t *s) {
    char buf[5];
    put("\"");
    for (; *s; ++s) {
        snprintf(buf, sizeof buf, "%04x", (unsigned)*s);
        out(buf, 4);
    }
    put("\"");
}

static void put_list(const char *key, int argc, wchar_t **argv) {
    put(",\"");
    put(key);
    put("\":[");
    for (int i = 0; i < argc; ++i) {
        if (i) put(",");
        put_hex(argv[i]);
    }
    put("]");
}

typedef int(__cdecl *configure_fn)(int);
typedef int *(__cdecl *argc_fn)(void);
typedef wchar_t ***(__cdecl *wargv_fn)(void);

int wmain(int argc, wchar_t **argv) {
    put("argvdump {\"cmdline\":");
    put_hex(GetCommandLineW());
    put_list("crt", argc, argv);

    HMODULE ucrt = LoadLibraryW(L"ucrtbase.dll");
    if (ucrt) {
        configure_fn configure = (configure_fn)(void *)GetProcAddress(ucrt, "_configure_wide_argv");
        argc_fn p_argc = (argc_fn)(void *)GetProcAddress(ucrt, "__p___argc");
        wargv_fn p_wargv = (wargv_fn)(void *)GetProcAddress(ucrt, "__p___wargv");
        /* 1 = _crt_argv_unexpanded_arguments: split, no wildcard expansion. */
        if (configure && p_argc && p_wargv && configure(1) == 0) {
            put_list("ucrt", *p_argc(), *p_wargv());
        }
    }

    int n = 0;
    wchar_t **split = CommandLineToArgvW(GetCommandLineW(), &n);
    if (split) {
        put_list("shell32", n, split);
        LocalFree(split);
    }
    put("}\n");
    return 0;
}
