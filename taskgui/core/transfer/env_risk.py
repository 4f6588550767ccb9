"""Environment variables that change *what* runs, not only how it behaves.

An import file sets each task's environment. Most variables are data for the command,
but some make other code run: ``LD_PRELOAD`` loads a library into every program the
command starts, ``PATH`` decides which ``tar`` is ``tar``, ``BASH_ENV`` is a script
every non-interactive bash runs first, ``PYTHONPATH`` decides which modules Python
imports. A task ``tar czf backup.tgz ~`` with ``LD_PRELOAD=/tmp/x.so`` looks harmless
in a list of commands. The import preview flags these names so a person sees them
before the file's tasks run as them.

The list is deliberately broad (a false alarm costs a glance; a miss costs the
account) and matches names exactly, plus a few prefixes that name whole families.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["RISKY_ENV_NAMES", "RISKY_ENV_PREFIXES", "is_risky_variable", "risky_variables"]

RISKY_ENV_NAMES = frozenset(
    {
        # the dynamic loader and the search paths of programs and libraries
        "PATH",
        "GCONV_PATH",
        "HOSTALIASES",
        "LOCPATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        # shells: startup files, exported functions, word splitting, trace hooks
        "BASH_ENV",
        "ENV",
        "ZDOTDIR",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "PS4",
        "PROMPT_COMMAND",
        "SHELL",
        "HOME",
        # interpreters and their module paths or startup hooks
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTHONINSPECT",
        "PERL5LIB",
        "PERLLIB",
        "PERL5OPT",
        "RUBYLIB",
        "RUBYOPT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "LUA_PATH",
        "LUA_CPATH",
        "CLASSPATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        # tools that run a program they are told to
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
    }
)
RISKY_ENV_PREFIXES = (
    "LD_",  # LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, ...
    "DYLD_",  # the same on macOS
    "BASH_FUNC_",  # a function bash defines before the command runs
)


def is_risky_variable(name: str) -> bool:
    """Whether setting ``name`` can change which code runs (see the module docstring)."""
    return name in RISKY_ENV_NAMES or name.startswith(RISKY_ENV_PREFIXES)


def risky_variables(names: Iterable[str]) -> tuple[str, ...]:
    """The risky ones among ``names``, in their order."""
    return tuple(name for name in names if is_risky_variable(name))
