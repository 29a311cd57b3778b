#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes an ld version script exporting exactly the symbols a library's
symbol list names (an X-macro header: every X(name) in a
`#define ..._SYMBOLS(X)` macro), and nothing else.

    version_script.py SYMBOLS.h OUT.map [SHARED.h ...]
    version_script.py --list SYMBOLS.h [SHARED.h ...]

A list may name another list, `OTHER_SYMBOLS(X)`, defined in SYMBOLS.h
or in one of the SHARED headers (the preload core's lists, preload/):
its names are the library's too.  The lists SHARED.h defines and
SYMBOLS.h does not name are not exported.  --list prints the names, one
a line (tests/symbol_lists).

The header is the one list: the library's C code declares, resolves and
defines its wrappers from the same macros, so a wrapper and its export
cannot drift apart.
"""
import re
import sys

DEFINE = re.compile(r'#define\s+(\w+_SYMBOLS)\(X\)((?:[^\n]*\\\n)*[^\n]*)')
USE = re.compile(r'\b(\w+_SYMBOLS)\(X\)')


def lists(text):
    """{macro name: its body} for every #define ..._SYMBOLS(X)."""
    return dict(DEFINE.findall(text))


def expand(name, defs, seen=()):
    if name in seen:
        sys.exit(f'{name}: names itself')
    if name not in defs:
        sys.exit(f'{name}: not defined in the headers given')
    body = defs[name]
    names = re.findall(r'\bX\((\w+)\)', body)
    for used in USE.findall(body):
        names += expand(used, defs, seen + (name,))
    return names


def symbols(src, shared):
    with open(src) as f:
        own = lists(f.read())
    defs = {}
    for path in shared:
        with open(path) as f:
            defs.update(lists(f.read()))
    defs.update(own)
    named = {u for body in own.values() for u in USE.findall(body)}
    names = []
    for name in own:
        if name not in named:
            names += expand(name, defs)
    return names


def main():
    args = sys.argv[1:]
    listing = args[:1] == ['--list']
    if listing:
        src, out, shared = args[1], None, args[2:]
    else:
        src, out, shared = args[0], args[1], args[2:]
    names = symbols(src, shared)
    if not names:
        sys.exit(f'{src}: no X(name) in a #define ..._SYMBOLS(X)')
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        sys.exit(f'{src}: listed twice: {" ".join(dup)}')
    if listing:
        print('\n'.join(names))
        return
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
