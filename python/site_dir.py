# SPDX-License-Identifier: MIT
"""Prints where `meson install` puts the arenacert package.

Usage: site_dir.py PREFIX FALLBACK

The first entry of this interpreter's sys.path that is a site-packages or
dist-packages directory under PREFIX/lib* (Debian's python3 searches
/usr/local/lib/python3.X/dist-packages, which meson's install scheme does
not give for the default prefix /usr/local), else FALLBACK (meson's
py.get_install_dir(), for a fresh prefix that PYTHONPATH will name).
"""
import os
import sys


def main(prefix: str, fallback: str) -> str:
    prefix = os.path.realpath(prefix)
    for entry in sys.path:
        if not entry:
            continue
        path = os.path.realpath(entry)
        if not path.startswith(prefix + os.sep):
            continue
        # PREFIX/lib.../site-packages, not /usr/local/... for PREFIX /usr
        parts = os.path.relpath(path, prefix).split(os.sep)
        if (parts[0].startswith("lib")
                and parts[-1] in ("site-packages", "dist-packages")):
            return path
    return fallback


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2]))
