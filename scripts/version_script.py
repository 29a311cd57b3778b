#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes an ld version script exporting exactly the symbols a library's
symbol list names (an X-macro header: every X(name) in a
`#define ..._SYMBOLS(X)` macro), and nothing else.

    version_script.py SYMBOLS.h OUT.map

The header is the one list: the library's C code declares, resolves and
defines its wrappers from the same macros, so a wrapper and its export
cannot drift apart.
"""
import re
import sys


def symbols(text):
    names = []
    # the bodies of #define NAME_SYMBOLS(X) ... (continued lines)
    for body in re.findall(r'#define\s+\w+_SYMBOLS\(X\)((?:[^\n]*\\\n)*[^\n]*)',
                           text):
        names += re.findall(r'\bX\((\w+)\)', body)
    return names


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src) as f:
        names = symbols(f.read())
    if not names:
        sys.exit(f'{src}: no X(name) in a #define ..._SYMBOLS(X)')
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        sys.exit(f'{src}: listed twice: {" ".join(dup)}')
    with open(out, 'w') as f:
        f.write(f'/* Generated from {src.split("/")[-2]}/{src.split("/")[-1]} '
                'by scripts/version_script.py: only the\n'
                ' * interposed entry points leave the module. */\n')
        f.write('{\nglobal:\n')
        for n in names:
            f.write(f'\t{n};\n')
        f.write('local:\n\t*;\n};\n')


if __name__ == '__main__':
    main()
