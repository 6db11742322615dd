"""Layout shared by the assembly generators in tools/asmgen."""


def block(lines):
    """Instructions in aligned columns, labels flush left after a blank
    line, macro invocations (starting with a tab) as they are."""
    out = []
    w = max(len(l.split(' ', 1)[0]) for l in lines if not l.endswith(':') and not l.startswith('\t'))
    for l in lines:
        if l.endswith(':'):
            out.append('\n' + l)
        elif l.startswith('\t'):
            out.append(l)
        else:
            ins, _, ops = l.partition(' ')
            out.append(f'\t{ins:<{w}} {ops}'.rstrip())
    return '\n'.join(out) + '\n'
