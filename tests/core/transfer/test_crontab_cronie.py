"""Crontab import reads each line as cronie does, so it never runs the wrong command.

One test per bullet of issue 12's import section: system crontabs (their user
column), six-field lines, SHELL=, HOME=, cronie's -n option, the % rule, and header
or ruler comments that are not names.
"""

from __future__ import annotations

import pytest

from taskgui.core.recurrence import Cron
from taskgui.core.transfer.crontab import CrontabSource, is_system_crontab, parse_crontab
from taskgui.core.transfer.crontab_entry import cron_command
from taskgui.core.transfer.plan import ParsedImport
from tests.helpers.factories import T0

# Debian's /etc/crontab, as installed.
DEBIAN_ETC_CRONTAB = """\
# /etc/crontab: system-wide crontab
# Unlike any other crontab you don't have to run the `crontab'
# command to install the new version when you edit this file
# and files in /etc/cron.d. These files also have username fields,
# that none of the other crontabs do.

SHELL=/bin/sh
# You can also override PATH, but by default, newer versions inherit it from the environment
#PATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin

# Example of job definition:
# .---------------- minute (0 - 59)
# |  .------------- hour (0 - 23)
# |  |  .---------- day of month (1 - 31)
# |  |  |  .------- month (1 - 12) OR jan,feb,mar,apr ...
# |  |  |  |  .---- day of week (0 - 6) (Sunday=0 or 7) OR sun,mon,tue,wed,thu,fri,sat
# |  |  |  |  |
# *  *  *  *  * user-name command to be executed
17 *\t* * *\troot\tcd / && run-parts --report /etc/cron.hourly
25 6\t* * *\troot\ttest -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }
47 6\t* * 7\troot\ttest -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.weekly; }
52 6\t1 * *\troot\ttest -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.monthly; }
#
"""


def parse(text: str, **source: object) -> ParsedImport:
    return parse_crontab(
        text,
        now=T0,
        default_tz="UTC",
        source=CrontabSource(**source),  # type: ignore[arg-type]
    )


def reasons(parsed: ParsedImport) -> dict[str, str]:
    return {item.where: item.reason for item in parsed.skipped}


# ------------------------------------------------------------ system crontabs


def test_a_system_crontab_imports_the_lines_of_this_user_without_the_user_name() -> None:
    parsed = parse(DEBIAN_ETC_CRONTAB, system=True, user="root")

    commands = [item.spec.command.line for item in parsed.candidates]
    assert commands[0] == "cd / && run-parts --report /etc/cron.hourly"  # not 'root cd /'
    assert len(commands) == 4 and not any(line.startswith("root") for line in commands)
    assert parsed.candidates[2].spec.recurrence == Cron("47 6 * * 7")
    assert parsed.notes[0].startswith("read as a system crontab, with a user after each schedule")
    assert "the lines for root are imported without the user name" in parsed.notes[0]


def test_a_line_for_another_user_is_refused_naming_that_user() -> None:
    parsed = parse(DEBIAN_ETC_CRONTAB, system=True, user="alice")

    assert parsed.candidates == ()
    reason = reasons(parsed)["line 19"]
    assert reason.startswith("runs as the user root (the user column of a system crontab)")
    assert "taskgui runs commands as alice" in reason


def test_a_system_crontab_is_recognised_by_its_path() -> None:
    assert is_system_crontab("/etc/crontab")
    assert is_system_crontab("/etc/cron.d/php")
    assert not is_system_crontab("/etc/cron.daily/logrotate")
    assert not is_system_crontab("/home/alice/crontab")


def test_a_system_crontab_is_recognised_by_a_user_name_in_that_column() -> None:
    text = "0 5 * * * alice /home/alice/bin/sync\n@daily www-data php /srv/cron.php\n"
    accounts = frozenset({"alice", "www-data"})

    parsed = parse(text, user="alice", accounts=accounts)

    [task] = parsed.candidates
    assert task.spec.command.line == "/home/alice/bin/sync"
    assert "runs as the user www-data" in reasons(parsed)["line 2"]
    assert "every entry has a user of this machine" in parsed.notes[0]


def test_a_user_crontab_whose_command_is_named_like_an_account_stays_a_user_crontab() -> None:
    # 'backup' and 'sync' are accounts on Debian, and commands too: one line without a
    # user after its schedule is enough to tell that the file has no user column.
    text = "0 3 * * * backup --all\n0 * * * * sync\n"
    parsed = parse(text, user="alice", accounts=frozenset({"backup", "sync"}))

    assert [item.spec.command.line for item in parsed.candidates] == ["backup --all", "sync"]
    assert not any("system crontab" in note for note in parsed.notes)


def test_without_knowing_its_user_a_system_crontab_imports_nothing() -> None:
    parsed = parse(DEBIAN_ETC_CRONTAB, system=True)
    assert parsed.candidates == ()
    assert "taskgui does not know which user it runs as" in parsed.notes[0]


def test_a_system_line_without_a_command_after_the_user_is_refused() -> None:
    parsed = parse("0 5 * * * root\n0 6 * * * ro:ot ls\n", system=True, user="root")
    skipped = reasons(parsed)
    assert (
        "has no user and command after it" in skipped["line 1"] or "no command" in skipped["line 1"]
    )
    assert "'ro:ot' is not a user name" in skipped["line 2"]


# --------------------------------------------------------------- six fields


@pytest.mark.parametrize(
    ("line", "phrase"),
    [
        ("*/6 * * * * * echo hi", "cronie refuses the line ('bad command')"),
        ("0 */6 * * * * echo hi", "cronie refuses the line ('bad command')"),
        ("0 0 */6 * * 1 echo hi", "cron would run '1 …' as the command"),
        ("30 0 9 * * 1-5 echo hi", "cron would run '1-5 …' as the command"),
        ("0 0 12 * * ? 2027 echo hi", "cron would run '? …' as the command"),
    ],
)
def test_a_six_field_line_is_refused_with_the_reason(line: str, phrase: str) -> None:
    parsed = parse(line + "\n")
    assert parsed.candidates == ()
    reason = reasons(parsed)["line 1"]
    assert reason.startswith("a sixth time field after ")
    assert "no seconds field" in reason and phrase in reason


def test_a_command_that_starts_with_a_digit_is_still_a_command() -> None:
    [task] = parse("0 1 * * * 7z a /tmp/backup.7z ~/docs\n").candidates
    assert task.spec.command.line == "7z a /tmp/backup.7z ~/docs"


def test_six_fields_in_a_system_crontab_are_refused_too() -> None:
    parsed = parse("*/6 * * * * * root echo hi\n", system=True, user="root")
    assert "a sixth time field" in reasons(parsed)["line 1"]


# ----------------------------------------------------------------- SHELL, HOME


def test_shell_applies_to_the_lines_below_it() -> None:
    text = (
        "0 1 * * * echo before\n"
        "SHELL=/bin/bash\n"
        "0 2 * * * source ~/.profile && backup &>> /tmp/backup.log\n"
        "SHELL=/bin/sh\n"
        "0 3 * * * echo after\n"
        "SHELL=bash\n"
        "0 4 * * * echo relative\n"
    )
    parsed = parse(text)

    shells = [item.spec.command.shell_path for item in parsed.candidates]
    assert shells == [None, "/bin/bash", None, None]
    assert "SHELL must be an absolute path" in reasons(parsed)["line 6"]
    assert all("SHELL" not in item.spec.command.env_dict for item in parsed.candidates)


def test_home_is_the_working_folder_as_in_cron() -> None:
    parsed = parse("HOME=/srv/app\n0 1 * * * ./run.sh\nHOME=relative\n0 2 * * * ls\n")

    first, second = parsed.candidates
    assert first.spec.command.cwd == "/srv/app"
    assert first.spec.command.env_dict == {"HOME": "/srv/app"}
    assert second.spec.command.cwd is None  # not absolute: it starts in your home folder
    assert second.spec.command.env_dict == {"HOME": "relative"}
    assert any("HOME=/srv/app (line 1) is the working folder" in note for note in parsed.notes)


# -------------------------------------------------------------- options and %


def test_cronies_n_option_is_not_part_of_the_command() -> None:
    parsed = parse("0 1 * * * -n echo hi\n@daily -n\t/usr/bin/report\n")

    assert [item.spec.command.line for item in parsed.candidates] == ["echo hi", "/usr/bin/report"]
    assert [item.spec.name for item in parsed.candidates] == ["echo hi", "/usr/bin/report"]
    assert any("line 1: cronie's -n option" in note for note in parsed.notes)


@pytest.mark.parametrize(
    ("command", "phrase"),
    [
        ("-q echo hi", "starts with '-q', which cronie reads as an option (not an option"),
        ("-n -n echo hi", "(given twice)"),
        ("-nfoo", "starts with '-nfoo'"),
        ("-n", "has no command after it"),
    ],
)
def test_an_option_cronie_refuses_is_refused(command: str, phrase: str) -> None:
    parsed = parse(f"0 1 * * * {command}\n")
    assert parsed.candidates == ()
    assert phrase in reasons(parsed)["line 1"]


def test_a_leading_dash_on_the_line_is_cronies_do_not_log_and_is_dropped() -> None:
    parsed = parse("-*/5 * * * * echo quiet\n")
    [task] = parsed.candidates
    assert task.spec.command.line == "echo quiet"
    assert task.spec.recurrence == Cron("*/5 * * * *")
    assert any("the leading '-'" in note for note in parsed.notes)


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        (r"date +\%Y-\%m-\%d", "date +%Y-%m-%d"),
        (r"printf 'a\nb'", r"printf 'a\nb'"),  # only a backslash before % goes
        (r"echo a\\b", r"echo a\\b"),
        (r"echo \\\%", r"echo \\%"),  # an escaped backslash, then an escaped %
        (r"echo \\%", None),  # the backslash is escaped, so this % starts stdin
        ("mail -s hi me%body", None),
        ("echo 100%", None),
    ],
)
def test_percent_follows_crons_rule(command: str, runs: str | None) -> None:
    assert cron_command(command) == runs
    parsed = parse(f"0 1 * * * {command}\n")
    if runs is None:
        assert "uses %" in reasons(parsed)["line 1"]
    else:
        assert parsed.candidates[0].spec.command.line == runs


# ------------------------------------------------------------------ comments


def test_header_and_ruler_comments_are_not_names() -> None:
    parsed = parse(DEBIAN_ETC_CRONTAB, system=True, user="root")
    # The ruler block above the first entry does not name it; its command does.
    assert parsed.candidates[0].spec.name.startswith("cd / && run-parts --report")
    text = (
        "# Backups\n# m h  dom mon dow   command\n0 1 * * * first\n"
        "# min hour day month weekday command\n0 2 * * * second\n"
        "# --------------\n0 3 * * * third\n"
        "# Weekly report\n# |  |  |  |  .---- day of week (0 - 6)\n0 4 * * * fourth\n"
        "# Monday\n0 5 * * 1 fifth\n"
    )
    names = [item.spec.name for item in parse(text).candidates]
    assert names == ["first", "second", "third", "fourth", "Monday"]
