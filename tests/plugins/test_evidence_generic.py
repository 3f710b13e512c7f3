"""The generic head + error lines + tail fallback."""

from stepkit.plugins.evidence import generic


def test_short_output_is_kept_whole():
    output = "compiling\n\x1b[32mdone\x1b[0m\n\n"
    assert generic.stepkit_condense_output(output=output).text == "compiling\ndone"


def test_progress_bars_show_their_final_state():
    output = "downloading  10%\r downloading 100%\r\ndone\r\n"
    assert generic.stepkit_condense_output(output=output).text == " downloading 100%\ndone"


def test_long_output_keeps_head_error_lines_and_tail():
    lines = [f"step {i}" for i in range(1000)]
    lines[500] = "FATAL: disk full"
    lines[700] = "Traceback (most recent call last):"
    text = generic.stepkit_condense_output(output="\n".join(lines)).text
    kept = text.split("\n")
    assert kept[: generic.HEAD_LINES] == lines[: generic.HEAD_LINES]
    assert kept[-generic.TAIL_LINES :] == lines[-generic.TAIL_LINES :]
    assert "FATAL: disk full" in kept and "Traceback (most recent call last):" in kept
    assert "[... 480 lines omitted ...]" in kept
    assert "step 600" not in kept


def test_error_lines_are_bounded():
    lines = [f"error {i}" for i in range(5000)]
    text = generic.stepkit_condense_output(output="\n".join(lines)).text
    assert (
        len(text.split("\n")) <= generic.HEAD_LINES + generic.MATCH_LINES + generic.TAIL_LINES + 2
    )
