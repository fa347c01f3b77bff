#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lists functions longer than a limit (default 120 lines, signature to closing brace) in C++ sources.

Usage: tests/tools/longfunctions.py [--limit N] [PATH...]   (default: core app widgets)

A function is recognised the way this project formats them: a signature (with its parameter list) followed by a
line that holds only "{" and ends at the "}" with the same indentation. Lambdas and class bodies are not counted
on their own; a function's lambdas count towards it."""
import argparse
import os
import re
import sys

CONTROL = re.compile(r'^\s*(if|for|while|switch|else|do|try|catch|namespace|class|struct|enum|union)\b')


def functions(path):
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    i = 0
    while i < len(lines):
        m = re.match(r'^(\s*)\{\s*$', lines[i])
        if m and i > 0:
            indent = m.group(1)
            # The signature: back to the line that starts it (same indentation, not a continuation).
            j = i - 1
            while j > 0 and (lines[j].startswith(indent + ' ') or lines[j].startswith(indent + ':')
                             or lines[j].startswith(indent + ',')) and lines[j].strip():
                j -= 1
            sig = ' '.join(l.strip() for l in lines[j:i])
            end = i + 1
            while end < len(lines) and not re.match('^' + re.escape(indent) + r'\}', lines[end]):
                end += 1
            if '(' in sig and not CONTROL.match(lines[j]) and not sig.rstrip().endswith(';') and '=' not in sig.split('(')[0]:
                name = re.search(r'([~\w:]+(?:operator\S*)?)\s*\(', sig)
                yield (name.group(1) if name else sig[:60]), j + 1, end - j + 1
                i = end
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--limit', type=int, default=120)
    ap.add_argument('paths', nargs='*', default=['core', 'app', 'widgets'])
    args = ap.parse_args()
    found = []
    for root in args.paths:
        walk = [(root, [], [os.path.basename(root)])] if os.path.isfile(root) else os.walk(root)
        for d, _, files in walk:
            for f in files:
                p = root if os.path.isfile(root) else os.path.join(d, f)
                if p.endswith(('.cpp', '.h')):
                    for name, line, length in functions(p):
                        if length > args.limit:
                            found.append((length, p, line, name))
    for length, p, line, name in sorted(found, reverse=True):
        print(f'{length:5d}  {p}:{line}  {name}')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
