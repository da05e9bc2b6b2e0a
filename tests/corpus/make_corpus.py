"""Make the corpus: real instrumentation packages drive their real client libraries against local
fake servers (tests/corpus/fake_llm.py), and their spans are kept as OTLP.

    python tests/corpus/make_corpus.py --case NAME --out tests/data/corpus/NAME.json
    python tests/corpus/make_corpus.py --case NAME --endpoint http://127.0.0.1:4318
    python tests/corpus/make_corpus.py --list

With --out the spans are encoded by the OTLP exporter's own encoder and written as OTLP/JSON
(hex ids, integer enums); with --endpoint the SDK's real OTLP/HTTP exporter sends them. The
Node cases (tests/corpus/node_case.py: a hand-instrumented agent, the Vercel AI SDK) need node
and `npm ci` in tests/corpus/node; their fixtures are what the Node OTLP/protobuf exporter sent. Each
case runs in its own process: instrumentors patch their libraries globally. Every trace starts
at a SERVER span as a web framework's instrumentation writes it (`POST /v1/ask`), except where
a case says otherwise. The expected diagnosis of each case is written by hand beside its
fixture (NAME.expected.yaml); nothing here computes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import version
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

import node_case
from corpus_cases import CASES
from fake_llm import FakeLLM


def _hex(b64: str) -> str:
    import base64
    return base64.b64decode(b64).hex()


def to_otlp_json(request) -> dict:
    """Write an ExportTraceServiceRequest as OTLP/JSON (ids in hex, enums as integers)."""
    body = MessageToDict(request, use_integers_for_enums=True)
    for resource in body["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
                for link in span.get("links", ()):
                    link["traceId"], link["spanId"] = _hex(link["traceId"]), _hex(link["spanId"])
    return body


def node(args: argparse.Namespace) -> int:
    """Play a Node case (tests/corpus/node_case.py) into a fixture or to an endpoint."""
    if args.out:
        request, trace_id = node_case.capture(args.case)
        args.out.write_text(json.dumps(to_otlp_json(request), indent=1) + "\n")
    else:
        trace_id = node_case.send(args.case, args.endpoint)
    print(json.dumps({"case": args.case, "trace_id": trace_id,
                      "versions": node_case.versions(args.case)}))
    return 0


def play(name: str) -> tuple[list, dict[str, str]]:
    """Run one case against a fresh fake server; return its spans and the package versions."""
    case = CASES[name]
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": f"corpus-{name}"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with FakeLLM(case.script) as llm:
        uninstrument = case.instrument(provider)
        tracer = provider.get_tracer("corpus.app")
        try:
            if not case.root:
                case.run(llm.url)
            else:
                with tracer.start_as_current_span(
                        "POST /v1/ask", kind=SpanKind.SERVER, record_exception=False,
                        set_status_on_exception=False,
                        attributes={"http.request.method": "POST", "http.route": "/v1/ask",
                                    "url.path": "/v1/ask"}) as root:
                    try:
                        case.run(llm.url)
                        root.set_attribute("http.response.status_code", 200)
                    except Exception as exc:  # the app answers 500, as frameworks do
                        print(f"{name} ended in {type(exc).__name__}: {exc}", file=sys.stderr)
                        root.set_attribute("http.response.status_code", 500)
                        root.set_attribute("error.type", "500")
                        root.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        except Exception as exc:  # a case without a root: its spans say how it ended
            print(f"{name} ended in {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            uninstrument()
    provider.shutdown()
    return list(memory.get_finished_spans()), {p: version(p) for p in case.packages}


def main(argv: list[str]) -> int:
    """Play a case into a fixture file or to an OTLP/HTTP endpoint."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=sorted(CASES) + sorted(node_case.CASES))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--endpoint")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(sorted(CASES) + sorted(node_case.CASES)))
        return 0
    if args.case in node_case.CASES:
        return node(args)
    spans, versions = play(args.case)
    if args.out:
        args.out.write_text(json.dumps(to_otlp_json(encode_spans(spans)), indent=1) + "\n")
    if args.endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        exporter = OTLPSpanExporter(endpoint=args.endpoint.rstrip("/") + "/v1/traces")
        if exporter.export(spans).name != "SUCCESS":
            print("export failed", file=sys.stderr)
            return 1
    print(json.dumps({"case": args.case, "spans": len(spans), "trace_id":
                      f"{spans[0].context.trace_id:032x}" if spans else None,
                      "versions": versions}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
