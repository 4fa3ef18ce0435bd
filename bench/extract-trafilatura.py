"""bench:extract's trafilatura worker: one long-lived process, so a page's time excludes Python's start.

Reads JSON lines {"id", "url", "html"} on stdin; writes one line {"id", "text", "ms", "cpu_ms", "error"}
per input line, in order. "ms" (wall) and "cpu_ms" (this process's CPU) are measured here around
extract() alone (trafilatura parses the HTML
itself, so parsing is included). The options are those of trafilatura's own evaluation
(tests/eval_common.py's EXTRACT_OPTS): no comments, tables kept, no formatting.
"""

import json
import sys
import time

from trafilatura import extract


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        started = time.perf_counter()
        cpu_started = time.process_time()
        error = None
        try:
            text = extract(
                request["html"],
                url=request.get("url"),
                include_comments=False,
                include_tables=True,
                include_formatting=False,
            ) or ""
        except Exception as exc:  # a crash is an empty answer for this page, the run goes on
            text, error = "", f"{type(exc).__name__}: {exc}"
        ms = (time.perf_counter() - started) * 1000
        cpu_ms = (time.process_time() - cpu_started) * 1000
        sys.stdout.write(json.dumps({"id": request["id"], "text": text, "ms": ms, "cpu_ms": cpu_ms, "error": error}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
