/* launch: start each command line of a list with CreateProcessW, verbatim.
 *
 *   launch.exe LISTFILE
 *
 * LISTFILE holds one command line per line, as the hex of its UTF-16LE code units (so a
 * line feed or any other character survives the trip). Each is passed unchanged as
 * lpCommandLine (lpApplicationName NULL, handles inherited, the launcher's environment
 * and directory), waited for, and followed on stdout by one line:
 *
 *   @@launch <index> exit=<code>       or       @@launch <index> error=<GetLastError()>
 *
 * The child writes to the same stdout, so whatever it printed precedes its marker.
 * One Wine process runs many launches: Wine's start-up is the slow part.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(const char *text) {
    HANDLE h = GetStdHandle(STD_OUTPUT_HANDLE);
    DWORD done = 0, len = (DWORD)strlen(text);
    while (len > 0 && WriteFile(h, text, len, &done, NULL) && done > 0) {
        text += done;
        len -= done;
    }
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decode a line of hex into a new NUL-terminated UTF-16 string; NULL if malformed. */
static wchar_t *decode(const char *line, size_t len) {
    if (len % 4 != 0) return NULL;
    wchar_t *text = malloc((len / 4 + 1) * sizeof(wchar_t));
    if (!text) return NULL;
    for (size_t i = 0; i < len / 4; ++i) {
        unsigned unit = 0;
        for (int k = 0; k < 4; ++k) {
            int v = hexval((unsigned char)line[4 * i + k]);
            if (v < 0) {
                free(text);
                return NULL;
            }
            unit = unit * 16 + (unsigned)v;
        }
        text[i] = (wchar_t)unit;
    }
    text[len / 4] = 0;
    return text;
}

int wmain(int argc, wchar_t **argv) {
    if (argc != 2) {
        fputs("usage: launch.exe LISTFILE\n", stderr);
        return 2;
    }
    FILE *list = _wfopen(argv[1], L"rb");
    if (!list) {
        fputs("launch: cannot open the list file\n", stderr);
        return 2;
    }
    static char line[1 << 20];
    char marker[96];
    int index = 0;
    while (fgets(line, sizeof line, list)) {
        size_t len = strcspn(line, "\r\n");
        wchar_t *command = decode(line, len);
        if (!command) {
            snprintf(marker, sizeof marker, "@@launch %d error=bad-hex\n", index++);
            put(marker);
            continue;
        }
        STARTUPINFOW si;
        PROCESS_INFORMATION pi;
        memset(&si, 0, sizeof si);
        si.cb = sizeof si;
        si.dwFlags = STARTF_USESTDHANDLES;
        si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
        si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
        si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
        if (CreateProcessW(NULL, command, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
            DWORD code = 0;
            WaitForSingleObject(pi.hProcess, INFINITE);
            GetExitCodeProcess(pi.hProcess, &code);
            CloseHandle(pi.hThread);
            CloseHandle(pi.hProcess);
            snprintf(marker, sizeof marker, "@@launch %d exit=%lu\n", index, (unsigned long)code);
        } else {
            snprintf(marker, sizeof marker, "@@launch %d error=%lu\n", index,
                     (unsigned long)GetLastError());
        }
        put(marker);
        free(command);
        ++index;
    }
    fclose(list);
    return 0;
}
