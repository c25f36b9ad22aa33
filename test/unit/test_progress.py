"""Progress of a long run: on a terminal one bar redrawn in place with the simulated time and the real-time factor,
events on lines of their own; in a log plain lines, one per interval of simulated time; runs add up."""
import io

from humanoid_balance.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_bar_redrawn_in_place_and_events_above_it(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")   # the bar is cut to the terminal's width
    terminal = Terminal()
    progress = Progress(14.0, stream=terminal)
    progress.update(7.0, lambda: "base 0.903 m")
    progress.line("[  7.0 s] lateral push")
    progress.update(7.5)
    progress.close()
    text = terminal.getvalue()
    assert text.startswith("\r\x1b[K  7.0/14 s |" + "█" * 12 + "·" * 12 + "| real-time factor ")
    assert "· base 0.903 m" in text
    assert "\r\x1b[K[  7.0 s] lateral push\n\r\x1b[K  7.5/14 s" in text   # the bar erased, the event, the bar again
    assert text.endswith("\n")


def test_a_log_gets_one_plain_line_per_interval_and_runs_add_up():
    log = io.StringIO()
    progress = Progress(stream=log, label="[bench] push: ", interval=1.0)
    for tick in range(1, 501):
        progress.update(tick * 0.002, lambda: "standing")
    progress.begin_run()
    for tick in range(1, 501):
        progress.update(tick * 0.002)
    lines = log.getvalue().splitlines()
    assert [line.split(" real-time factor ")[0] for line in lines] == [
        "[bench] push: [  1.0 s] standing,", "[bench] push: [  2.0 s]"]
    assert "\r" not in log.getvalue()


def test_nowhere_and_without_events():
    Progress(stream=None).update(1.0)
    log = io.StringIO()
    progress = Progress(stream=log, events=False)
    progress.line("a push")
    assert log.getvalue() == ""
