"""The three prompt-budget guards (harness/guards/budget.py).

Rules: BUDGET-NOOP-001, BUDGET-ARGV-001, BUDGET-CMDSHIM-001, BUDGET-DIRECTEXE-001,
BUDGET-EXCLUSIVE-001, BUDGET-ORDER-001, BUDGET-MESSAGE-001. Limits and lengths are
computed here by hand from ref §4 (character counts of hand-built command lines), never
by calling the module's own builders.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext
from harness.errors import PromptTooLargeError
from harness.guards.budget import (
    ARGV_ADVICE,
    QUOTE_HEAVY_ADVICE,
    argv_prompt_limit,
    check_prompt_argv_budget,
    check_prompt_budget,
    check_windows_cmd_shim_budget,
    check_windows_direct_exe_budget,
    explain_argv_prompt_limit,
)

SAFE = 32_511
SHIM = "C:\\npm\\deepseek.cmd"  # 19 characters, needs no quoting
EXE = "C:\\tools\\deepseek.exe"  # 21 characters, needs no quoting
PLATFORMS = ("win32", "darwin", "linux")


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    return ["exec", "--auto", prompt]


def make_def(
    max_bytes: int | None = 30_000,
    *,
    hint: str | None = None,
    delivery: PromptDelivery = PromptDelivery.ARGV,
) -> AgentDef:
    return AgentDef(
        id="fake-argv",
        name="Fake Argv CLI",
        bin="fake-argv",
        build_args=_build_args,
        stream_format="plain",
        prompt_delivery=delivery,
        max_prompt_arg_bytes=max_bytes,
        prompt_too_large_hint=hint,
    )


ARGV_DEF = make_def()


def _expected_argv_limit(m: int, platform: str) -> int:
    # ref §4.1 table, restated: win32 -> m; darwin -> max(m, 256 KiB); else max(m, 100 000).
    return {"win32": m, "darwin": max(m, 256 * 1024)}.get(platform, max(m, 100_000))


# --- BUDGET-ARGV-001 -------------------------------------------------------------------


@pytest.mark.rule("BUDGET-ARGV-001")
@pytest.mark.parametrize(
    ("m", "platform", "limit"),
    [
        (30_000, "win32", 30_000),
        (30_000, "darwin", 262_144),
        (30_000, "linux", 100_000),
        (30_000, "freebsd14", 100_000),
        (300_000, "win32", 300_000),
        (300_000, "darwin", 300_000),
        (300_000, "linux", 300_000),
        (150_000, "darwin", 262_144),
        (150_000, "linux", 150_000),
    ],
)
def test_argv_limit_per_platform(m: int, platform: str, limit: int) -> None:
    assert argv_prompt_limit(m, platform) == limit


@pytest.mark.rule("BUDGET-ARGV-001")
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("m", [30_000, 120_000, 300_000])
def test_argv_at_under_and_over_the_limit(platform: str, m: int) -> None:
    defn = make_def(m)
    limit = _expected_argv_limit(m, platform)
    assert check_prompt_argv_budget(defn, "x" * (limit - 1), platform) is None
    assert check_prompt_argv_budget(defn, "x" * limit, platform) is None
    error = check_prompt_argv_budget(defn, "x" * (limit + 1), platform)
    assert isinstance(error, PromptTooLargeError)
    assert (error.bytes, error.limit, error.command_line_length) == (limit + 1, limit, None)
    assert error.rule == "BUDGET-ARGV-001"


@pytest.mark.rule("BUDGET-ARGV-001")
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(("char", "width"), [("é", 2), ("中", 3), ("😀", 4)])
def test_argv_counts_utf8_bytes_not_characters(platform: str, char: str, width: int) -> None:
    limit = _expected_argv_limit(30_000, platform)
    fits = limit // width
    pad = "x" * (limit - fits * width)  # brings the byte count to exactly the limit
    at_limit = char * fits + pad
    assert check_prompt_argv_budget(ARGV_DEF, at_limit, platform) is None
    over = at_limit + "x"
    error = check_prompt_argv_budget(ARGV_DEF, over, platform)
    assert error is not None
    assert error.bytes == limit + 1
    assert len(over) < limit  # far fewer characters than bytes


@pytest.mark.rule("BUDGET-ARGV-001")
def test_argv_lone_surrogate_counts_as_the_replacement_character() -> None:
    # Node's Buffer.byteLength counts a lone surrogate as U+FFFD: 3 bytes; never raises.
    prompt = "\ud800" * 10_000 + "x"
    error = check_prompt_argv_budget(ARGV_DEF, prompt, "win32")
    assert error is not None and error.bytes == 30_001


@pytest.mark.rule("BUDGET-ARGV-001")
@settings(max_examples=50)
@given(
    m=st.integers(min_value=0, max_value=400_000),
    platform=st.sampled_from([*PLATFORMS, "cygwin", "aix"]),
    size=st.integers(min_value=0, max_value=400_000),
)
def test_argv_fails_iff_bytes_exceed_the_limit(m: int, platform: str, size: int) -> None:
    error = check_prompt_argv_budget(make_def(m), "a" * size, platform)
    assert (error is not None) is (size > _expected_argv_limit(m, platform))


# --- BUDGET-NOOP-001 ---------------------------------------------------------------------


@pytest.mark.rule("BUDGET-NOOP-001")
@pytest.mark.parametrize(
    "delivery",
    [PromptDelivery.STDIN, PromptDelivery.FILE, PromptDelivery.PROTOCOL, PromptDelivery.ARGV],
)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_unbudgeted_defs_are_never_checked(delivery: PromptDelivery, platform: str) -> None:
    defn = make_def(None, delivery=delivery)
    huge = '"%\\ ' * 200_000
    args = ["exec", huge]
    assert check_prompt_argv_budget(defn, huge, platform) is None
    assert check_windows_cmd_shim_budget(defn, SHIM, args) is None
    assert check_windows_direct_exe_budget(defn, EXE, args) is None
    check_prompt_budget(defn, huge, platform=platform, resolved_bin=SHIM, args=args)
    check_prompt_budget(defn, huge, platform=platform, resolved_bin=EXE, args=args)


# --- BUDGET-CMDSHIM-001 -------------------------------------------------------------------


def _shim_length_plain(prompt_len: int) -> int:
    # 'cmd.exe /d /s /c "' + 'C:\npm\deepseek.cmd exec --auto ' + prompt + '"'
    return 17 + 1 + 19 + 1 + 4 + 1 + 6 + 1 + prompt_len + 1


@pytest.mark.rule("BUDGET-CMDSHIM-001")
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_cmd_shim_at_under_and_over_the_limit(delta: int) -> None:
    prompt_len = SAFE - _shim_length_plain(0) + delta
    args = ["exec", "--auto", "x" * prompt_len]
    assert _shim_length_plain(prompt_len) == SAFE + delta
    error = check_windows_cmd_shim_budget(ARGV_DEF, SHIM, args)
    if delta <= 0:
        assert error is None
        return
    assert error is not None
    assert (error.command_line_length, error.limit, error.bytes) == (SAFE + 1, SAFE, None)
    assert error.rule == "BUDGET-CMDSHIM-001"


@pytest.mark.rule("BUDGET-CMDSHIM-001")
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_cmd_shim_counts_doubled_quotes_and_escaped_percent(delta: int) -> None:
    # k quotes + k percents: wrapped ("" each quote, "^%" each percent) -> 2 + 2k + 4k.
    base = 17 + 1 + 19 + 1 + 4 + 1 + 6 + 1 + 1  # prefix, quote, bin, args, closing quote
    k = (SAFE - base - 2) // 6
    rest = SAFE - base - 2 - 6 * k + delta  # filler characters to land on SAFE + delta
    prompt = '"' * k + "%" * k + "y" * rest
    assert check_prompt_argv_budget(ARGV_DEF, prompt, "win32") is None  # raw bytes fit
    error = check_windows_cmd_shim_budget(ARGV_DEF, SHIM, ["exec", "--auto", prompt])
    assert (error is None) is (delta <= 0)
    if error is not None:
        assert error.command_line_length == SAFE + delta


@pytest.mark.rule("BUDGET-CMDSHIM-001")
@pytest.mark.parametrize("platform", PLATFORMS)
def test_quote_heavy_prompt_passes_bytes_but_fails_the_shim(platform: str) -> None:
    prompt = '{"k": "v"} ' * 2_500  # 27 500 bytes; its 10 000 quotes double
    assert check_prompt_argv_budget(ARGV_DEF, prompt, platform) is None
    with pytest.raises(PromptTooLargeError) as info:
        check_prompt_budget(
            ARGV_DEF, prompt, platform=platform, resolved_bin=SHIM, args=["exec", prompt]
        )
    assert info.value.rule == "BUDGET-CMDSHIM-001"
    # 2 500 * (11 + 4 doubled quotes) + 2 wrapping quotes, inside 'cmd.exe /d /s /c "…"'.
    assert info.value.command_line_length == 17 + 1 + 19 + 1 + 4 + 1 + 37_500 + 2 + 1


@pytest.mark.rule("BUDGET-CMDSHIM-001")
def test_cmd_shim_counts_utf16_units() -> None:
    # 16 300 emoji: 16 300 code points, 32 600 UTF-16 units (CreateProcess counts units).
    defn = make_def(70_000)
    prompt = "😀" * 16_300
    args = ["exec", "--auto", prompt]
    assert check_prompt_argv_budget(defn, prompt, "linux") is None
    error = check_windows_cmd_shim_budget(defn, SHIM, args)
    assert error is not None
    assert error.command_line_length == _shim_length_plain(32_600)
    assert check_windows_direct_exe_budget(defn, EXE, args) is not None


@pytest.mark.rule("BUDGET-CMDSHIM-001")
def test_cmd_shim_quotes_a_bin_path_with_spaces() -> None:
    shim = "C:\\Program Files\\nodejs\\deepseek.cmd"  # 36 chars, quoted -> 38
    prompt_len = SAFE - (17 + 1 + 38 + 1 + 4 + 1 + 6 + 1 + 1)
    args = ["exec", "--auto", "x" * prompt_len]
    assert check_windows_cmd_shim_budget(ARGV_DEF, shim, args) is None
    args[-1] += "x"
    error = check_windows_cmd_shim_budget(ARGV_DEF, shim, args)
    assert error is not None and error.command_line_length == SAFE + 1


# --- BUDGET-DIRECTEXE-001 -----------------------------------------------------------------


def _exe_length_plain(prompt_len: int) -> int:
    # 'C:\tools\deepseek.exe exec --auto ' + prompt
    return 21 + 1 + 4 + 1 + 6 + 1 + prompt_len


@pytest.mark.rule("BUDGET-DIRECTEXE-001")
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_direct_exe_at_under_and_over_the_limit(delta: int) -> None:
    prompt_len = SAFE - _exe_length_plain(0) + delta
    args = ["exec", "--auto", "x" * prompt_len]
    error = check_windows_direct_exe_budget(ARGV_DEF, EXE, args)
    if delta <= 0:
        assert error is None
        return
    assert error is not None
    assert (error.command_line_length, error.limit, error.bytes) == (SAFE + 1, SAFE, None)
    assert error.rule == "BUDGET-DIRECTEXE-001"


@pytest.mark.rule("BUDGET-DIRECTEXE-001")
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_direct_exe_counts_escaped_quotes_and_doubled_backslashes(delta: int) -> None:
    # b backslashes then one quote then a space: "\\"*(2b+1) + '"' + " " inside quotes.
    base = _exe_length_plain(0)
    b = 10_000
    quoted = 2 + (2 * b + 1) + 1 + 1  # wrapping quotes, escaped quote, the space
    filler = SAFE - base - quoted + delta
    prompt = "\\" * b + '" ' + "z" * filler
    assert check_prompt_argv_budget(ARGV_DEF, prompt, "win32") is None  # raw bytes fit
    error = check_windows_direct_exe_budget(ARGV_DEF, EXE, ["exec", "--auto", prompt])
    assert (error is None) is (delta <= 0)
    if error is not None:
        assert error.command_line_length == SAFE + delta


@pytest.mark.rule("BUDGET-DIRECTEXE-001")
@pytest.mark.parametrize("platform", PLATFORMS)
def test_quote_heavy_prompt_passes_bytes_but_fails_direct_exe(platform: str) -> None:
    prompt = '{"k": "v"} ' * 2_500  # every quote becomes \" : 37 500 chars, plus the wrapper
    assert check_prompt_argv_budget(ARGV_DEF, prompt, platform) is None
    with pytest.raises(PromptTooLargeError) as info:
        check_prompt_budget(
            ARGV_DEF, prompt, platform=platform, resolved_bin=EXE, args=["exec", "--auto", prompt]
        )
    assert info.value.rule == "BUDGET-DIRECTEXE-001"
    assert info.value.command_line_length == _exe_length_plain(37_500 + 2)


@pytest.mark.rule("BUDGET-DIRECTEXE-001")
def test_direct_exe_applies_to_unc_and_forward_slash_paths() -> None:
    args = ["x" * SAFE]
    assert check_windows_direct_exe_budget(ARGV_DEF, "\\\\srv\\share\\d.exe", args) is not None
    assert check_windows_direct_exe_budget(ARGV_DEF, "d:/tools/deepseek", args) is not None


# --- BUDGET-EXCLUSIVE-001 -----------------------------------------------------------------


@pytest.mark.rule("BUDGET-EXCLUSIVE-001")
@pytest.mark.parametrize("shim", [SHIM, "C:\\npm\\DEEPSEEK.CMD", "C:\\npm\\deepseek.Bat"])
def test_a_shim_never_triggers_the_direct_exe_check(shim: str) -> None:
    # Backslashes before quotes double only under libuv rules; quotes double under cmd rules.
    # This prompt overflows libuv quoting only, and the shim check owns the .cmd binary.
    prompt = "\\" * 16_300 + '" x'
    args = ["exec", prompt]
    assert check_windows_direct_exe_budget(ARGV_DEF, shim, args) is None
    assert check_windows_direct_exe_budget(ARGV_DEF, EXE, args) is not None
    assert check_windows_cmd_shim_budget(ARGV_DEF, shim, args) is None
    check_prompt_budget(ARGV_DEF, prompt, platform="win32", resolved_bin=shim, args=args)


@pytest.mark.rule("BUDGET-EXCLUSIVE-001")
def test_an_exe_never_triggers_the_shim_check() -> None:
    # Percent signs cost 4 chars under cmd rules and 1 under libuv rules.
    prompt = "%" * 8_200
    args = ["exec", prompt]
    assert check_windows_cmd_shim_budget(ARGV_DEF, EXE, args) is None
    assert check_windows_cmd_shim_budget(ARGV_DEF, SHIM, args) is not None
    assert check_windows_direct_exe_budget(ARGV_DEF, EXE, args) is None
    check_prompt_budget(ARGV_DEF, prompt, platform="win32", resolved_bin=EXE, args=args)


@pytest.mark.rule("BUDGET-EXCLUSIVE-001")
@pytest.mark.parametrize(
    "resolved_bin", ["/usr/local/bin/deepseek", "deepseek.exe", "tools\\deepseek.exe", "", None]
)
def test_non_windows_paths_get_no_windows_check(resolved_bin: str | None) -> None:
    args = ['"' * 40_000]
    assert check_windows_direct_exe_budget(ARGV_DEF, resolved_bin, args) is None
    if resolved_bin != "deepseek.exe":
        assert check_windows_cmd_shim_budget(ARGV_DEF, resolved_bin, args) is None


_bins = st.one_of(
    st.sampled_from([SHIM, EXE, "\\\\h\\s\\x.BAT", "/opt/x.cmd", "/opt/x", "x", "", None]),
    st.text(alphabet=st.sampled_from("Cc:\\/.batcmdexe "), max_size=14),
)


@pytest.mark.rule("BUDGET-EXCLUSIVE-001")
@settings(max_examples=60)
@given(resolved_bin=_bins, text=st.text(alphabet=st.sampled_from('"%\\ x'), max_size=8))
def test_at_most_one_windows_check_fires(resolved_bin: str | None, text: str) -> None:
    args = [text * 9_000]
    fired = [
        check_windows_cmd_shim_budget(ARGV_DEF, resolved_bin, args) is not None,
        check_windows_direct_exe_budget(ARGV_DEF, resolved_bin, args) is not None,
    ]
    assert sum(fired) <= 1


# --- BUDGET-ORDER-001 ---------------------------------------------------------------------


@pytest.mark.rule("BUDGET-ORDER-001")
@pytest.mark.parametrize("resolved_bin", [SHIM, EXE])
def test_the_argv_check_runs_first(resolved_bin: str) -> None:
    prompt = '"' * 31_000  # over 30 000 bytes on win32 and over both Windows limits
    args = ["exec", prompt]
    with pytest.raises(PromptTooLargeError) as info:
        check_prompt_budget(
            ARGV_DEF, prompt, platform="win32", resolved_bin=resolved_bin, args=args
        )
    assert info.value.rule == "BUDGET-ARGV-001"
    # On linux the byte limit is 100 000, so the Windows check is the first to fail.
    with pytest.raises(PromptTooLargeError) as info:
        check_prompt_budget(
            ARGV_DEF, prompt, platform="linux", resolved_bin=resolved_bin, args=args
        )
    assert info.value.rule in {"BUDGET-CMDSHIM-001", "BUDGET-DIRECTEXE-001"}


@pytest.mark.rule("BUDGET-ORDER-001")
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("resolved_bin", [SHIM, EXE, "/usr/bin/deepseek", None])
def test_check_prompt_budget_passes_small_prompts(platform: str, resolved_bin: str | None) -> None:
    prompt = 'a "quoted" 50% prompt\\'
    check_prompt_budget(
        ARGV_DEF, prompt, platform=platform, resolved_bin=resolved_bin, args=["exec", prompt]
    )


@pytest.mark.rule("BUDGET-ORDER-001", "BUDGET-NOOP-001")
@settings(max_examples=40)
@given(
    filler=st.integers(min_value=32_300, max_value=32_600),
    tail=st.text(max_size=40),
    resolved_bin=st.sampled_from([SHIM, EXE, "/usr/bin/deepseek"]),
    platform=st.sampled_from(PLATFORMS),
    budgeted=st.booleans(),
)
def test_check_prompt_budget_raises_exactly_the_first_error(
    filler: int, tail: str, resolved_bin: str, platform: str, budgeted: bool
) -> None:
    defn = make_def(40_000 if budgeted else None)
    prompt = "w" * filler + tail
    args = ["exec", "--auto", prompt]
    expected = (
        check_prompt_argv_budget(defn, prompt, platform)
        or check_windows_cmd_shim_budget(defn, resolved_bin, args)
        or check_windows_direct_exe_budget(defn, resolved_bin, args)
    )
    if not budgeted:
        assert expected is None
    try:
        check_prompt_budget(defn, prompt, platform=platform, resolved_bin=resolved_bin, args=args)
    except PromptTooLargeError as error:
        assert expected is not None
        assert (error.rule, error.message) == (expected.rule, expected.message)
    else:
        assert expected is None


# --- BUDGET-MESSAGE-001 -------------------------------------------------------------------


@pytest.mark.rule("BUDGET-MESSAGE-001")
def test_messages_name_the_def_counts_limit_and_advice() -> None:
    argv_error = check_prompt_argv_budget(ARGV_DEF, "é" * 15_001, "win32")
    assert argv_error is not None
    assert argv_error.code == "AGENT_PROMPT_TOO_LARGE"
    assert argv_error.message == (
        "Fake Argv CLI requires the prompt as a command-line argument and this run's composed "
        "prompt exceeds the safe size (30002 > 30000 bytes). Reduce the selected "
        "skills/design-system context, shorten the conversation, or pick an adapter with "
        "stdin support."
    )
    assert str(argv_error).startswith("[BUDGET-ARGV-001] Fake Argv CLI requires")

    shim_error = check_windows_cmd_shim_budget(ARGV_DEF, SHIM, ['"' * 16_300])
    assert shim_error is not None and shim_error.code == "AGENT_PROMPT_TOO_LARGE"
    length = 17 + 1 + 19 + 1 + 2 + 32_600 + 1
    assert shim_error.message == (
        "Fake Argv CLI on Windows runs through a .cmd shim and this run's prompt would expand "
        "past the CreateProcess command-line limit after cmd.exe quote-doubling "
        f"({length} > 32511 chars). Reduce quote-heavy content in the selected "
        "skills/design-system context, shorten the conversation, or pick an adapter with "
        "stdin support."
    )

    exe_error = check_windows_direct_exe_budget(ARGV_DEF, EXE, ['"' * 16_300])
    assert exe_error is not None and exe_error.code == "AGENT_PROMPT_TOO_LARGE"
    length = 21 + 1 + 2 + 32_600
    assert exe_error.message == (
        "Fake Argv CLI on Windows builds a CreateProcess command line and this run's prompt "
        f"would expand past the limit after libuv quote-escaping ({length} > 32511 chars). "
        "Reduce quote-heavy content in the selected skills/design-system context, shorten the "
        "conversation, or pick an adapter with stdin support."
    )
    assert ARGV_ADVICE in argv_error.message
    assert QUOTE_HEAVY_ADVICE in shim_error.message and QUOTE_HEAVY_ADVICE in exe_error.message


@pytest.mark.rule("BUDGET-MESSAGE-001")
def test_a_def_hint_replaces_the_advice_sentence_in_every_check() -> None:
    hint = "Use the API connection for large contexts."
    defn = make_def(30_000, hint=hint)
    errors = [
        check_prompt_argv_budget(defn, "x" * 30_001, "win32"),
        check_windows_cmd_shim_budget(defn, SHIM, ['"' * 16_300]),
        check_windows_direct_exe_budget(defn, EXE, ['"' * 16_300]),
    ]
    for error in errors:
        assert error is not None
        assert error.message.endswith(" " + hint)
        assert ARGV_ADVICE not in error.message and QUOTE_HEAVY_ADVICE not in error.message
        assert error.message.startswith("Fake Argv CLI ")


# --- never raises on arbitrary input ------------------------------------------------------


@pytest.mark.rule("BUDGET-ARGV-001", "BUDGET-CMDSHIM-001", "BUDGET-DIRECTEXE-001")
@given(
    prompt=st.text(),
    args=st.lists(st.text(), max_size=4),
    resolved_bin=st.one_of(st.none(), st.text(max_size=30), st.sampled_from([SHIM, EXE])),
    platform=st.text(max_size=8),
    m=st.one_of(st.none(), st.integers(min_value=0, max_value=50)),
)
def test_guards_return_none_or_one_error_for_any_input(
    prompt: str, args: list[str], resolved_bin: str | None, platform: str, m: int | None
) -> None:
    defn = make_def(m)
    for error in (
        check_prompt_argv_budget(defn, prompt, platform),
        check_windows_cmd_shim_budget(defn, resolved_bin, args),
        check_windows_direct_exe_budget(defn, resolved_bin, args),
    ):
        assert error is None or (
            isinstance(error, PromptTooLargeError) and error.code == "AGENT_PROMPT_TOO_LARGE"
        )


@pytest.mark.rule("BUDGET-ARGV-001")
@given(
    max_bytes=st.integers(min_value=1, max_value=400_000),
    platform=st.sampled_from(["linux", "darwin", "win32", "freebsd"]),
)
def test_the_explained_limit_is_the_applied_one_and_names_whose_number_it_is(
    max_bytes: int, platform: str
) -> None:
    explained = explain_argv_prompt_limit(max_bytes, platform)
    assert explained.bytes == argv_prompt_limit(max_bytes, platform)
    if explained.source == "def":
        assert explained.bytes == max_bytes
    else:
        assert explained.source == "platform"
        assert explained.bytes == explained.platform_budget and explained.bytes > max_bytes
    assert explained.describe(platform).startswith(f"{explained.bytes} bytes (")
