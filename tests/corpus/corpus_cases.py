"""The corpus cases: which instrumentation, which client call, and what the fake server answers.

Each case's story (and so its hand-written expectation) is in its docstring; the expectations
themselves are tests/data/corpus/NAME.expected.yaml.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

#: The API key the SDKs send to the fake server (it checks none).
KEY = "sk-local-fake"


@dataclass(frozen=True)
class Case:
    """A corpus case: the server's script, the instrumentation, and the client's calls."""

    script: tuple[str, ...]
    instrument: Callable[[object], Callable[[], None]]
    run: Callable[[str], None]
    packages: tuple[str, ...]
    root: bool = True


def _instrumentors(*instrumentors) -> Callable[[object], Callable[[], None]]:
    def instrument(provider) -> Callable[[], None]:
        made = [factory() for factory in instrumentors]
        for made_one in made:
            made_one.instrument(tracer_provider=provider)
        return lambda: [m.uninstrument() for m in made]
    return instrument


def _instrumentor(module: str, name: str) -> Callable[[], object]:
    """A factory of an instrumentor, imported only when a case runs (each in its own process)."""
    return lambda: getattr(importlib.import_module(module), name)()


_otel_openai = _instrumentor("opentelemetry.instrumentation.openai_v2", "OpenAIInstrumentor")
_oi_openai = _instrumentor("openinference.instrumentation.openai", "OpenAIInstrumentor")
_oi_anthropic = _instrumentor("openinference.instrumentation.anthropic", "AnthropicInstrumentor")
_oi_langchain = _instrumentor("openinference.instrumentation.langchain", "LangChainInstrumentor")
_ll_openai = _instrumentor("opentelemetry.instrumentation.openai", "OpenAIInstrumentor")
_ll_langchain = _instrumentor("opentelemetry.instrumentation.langchain", "LangchainInstrumentor")
_httpx = _instrumentor("opentelemetry.instrumentation.httpx", "HTTPXClientInstrumentor")
_requests = _instrumentor("opentelemetry.instrumentation.requests", "RequestsInstrumentor")


def _chat(url: str, retries: int = 2, timeout: float = 10.0) -> None:
    """One chat completion through the openai SDK (its own retries)."""
    import openai
    client = openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=retries,
                           timeout=timeout)
    client.chat.completions.create(model="gpt-4o-mini",
                                   messages=[{"role": "user", "content": "Where is my order?"}])


def _message(url: str) -> None:
    """One message through the anthropic SDK, one retry."""
    import anthropic
    client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=1)
    client.messages.create(model="claude-3-5-haiku-latest", max_tokens=64,
                           messages=[{"role": "user", "content": "Where is my order?"}])


def _requests_retrying(url: str, attempts: int = 3) -> None:
    """A tool call over requests, retried by hand on 5xx (each try is its own span)."""
    import requests
    for attempt in range(attempts):
        response = requests.get(url + "/tools/order_status?order=42", timeout=5)
        if response.status_code < 500:
            return
    response.raise_for_status()


def _httpx_timeout(url: str) -> None:
    """A tool call over httpx with a 0.3 s read timeout against a server taking 1.5 s."""
    import httpx
    with httpx.Client(timeout=httpx.Timeout(5.0, read=0.3)) as client:
        client.post(url + "/tools/search_kb", json={"query": "refund"})


def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return f"Refunds take 5 days ({query})."


def lookup_order(query: str) -> str:
    """Look an order up in the orders service."""
    raise ConnectionError("Connection refused: orders service")


def _react(model, tools: list, name: str):
    """A ReAct agent graph: the model node calls tools until it answers (LangGraph's pattern)."""
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    bound = model.bind_tools(tools)
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [bound.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile(name=name)


def _model(url: str):
    from langchain_openai import ChatOpenAI
    return ChatOpenAI(model="gpt-4o-mini", base_url=url + "/v1", api_key=KEY, max_retries=0,
                      timeout=10)


def _graph(url: str, tool: Callable[[str], str]) -> None:
    """A LangGraph ReAct agent (ChatOpenAI and one tool) answering one question."""
    _react(_model(url), [tool], "support_agent").invoke(
        {"messages": [("user", "How long do refunds take?")]})


def _nested_graph(url: str) -> None:
    """A supervisor graph whose node runs a research sub-agent (a ReAct agent with a tool)."""
    from langgraph.graph import END, START, MessagesState, StateGraph
    model = _model(url)
    graph = StateGraph(MessagesState)
    graph.add_node("research_agent", _react(model, [search_kb], "research_agent"))
    graph.add_node("supervisor", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_edge(START, "research_agent")
    graph.add_edge("research_agent", "supervisor")
    graph.add_edge("supervisor", END)
    graph.compile(name="support_supervisor").invoke(
        {"messages": [("user", "How long do refunds take?")]})


OTEL_OPENAI = ("openai", "opentelemetry-instrumentation-openai-v2")
OI_OPENAI = ("openai", "openinference-instrumentation-openai")
LL_OPENAI = ("openai", "opentelemetry-instrumentation-openai")
LL_LANGCHAIN = ("opentelemetry-instrumentation-langchain", "langchain-core", "langchain-openai",
                "langgraph", "openai")
OI_LANGCHAIN = ("openinference-instrumentation-langchain", "langchain-core", "langchain-openai",
                "langgraph", "openai")

CASES: dict[str, Case] = {
    # openai-v2: a chat that answers.
    "openai_v2_ok": Case((), _instrumentors(_otel_openai), _chat, OTEL_OPENAI),
    # openai-v2: the server answers 500 three times; the SDK's two retries do not help.
    "openai_v2_server_error": Case(("500", "500", "500"), _instrumentors(_otel_openai), _chat,
                                   OTEL_OPENAI),
    # openai-v2: a 429, then the SDK's own retry (inside the one chat span) is answered.
    "openai_v2_rate_limit_recovered": Case(("429", "ok"), _instrumentors(_otel_openai), _chat,
                                           OTEL_OPENAI),
    # openai-v2: the model takes 2 s, the client gives up after 0.5 s and does not retry.
    "openai_v2_timeout": Case(("slow:2",), _instrumentors(_otel_openai),
                              lambda url: _chat(url, retries=0, timeout=0.5), OTEL_OPENAI),
    # openai-v2 alone, no server span around it: the chat span is the trace; 500 x3.
    "openai_v2_no_root_server_error": Case(("500", "500", "500"), _instrumentors(_otel_openai),
                                           _chat, OTEL_OPENAI, root=False),
    # OpenInference on openai: a chat that answers.
    "openinference_openai_ok": Case((), _instrumentors(_oi_openai), _chat, OI_OPENAI),
    # OpenInference on openai: 429 three times; the SDK gives up with RateLimitError.
    "openinference_openai_rate_limited": Case(("429", "429", "429"), _instrumentors(_oi_openai),
                                              _chat, OI_OPENAI),
    # OpenLLMetry (Traceloop's instrumentation) on openai: a chat that answers.
    "openllmetry_openai_ok": Case((), _instrumentors(_ll_openai), _chat, LL_OPENAI),
    # OpenLLMetry on openai: 429 three times; the SDK gives up with RateLimitError.
    "openllmetry_openai_rate_limited": Case(("429", "429", "429"), _instrumentors(_ll_openai),
                                            _chat, LL_OPENAI),
    # OpenInference on anthropic: a message that answers.
    "openinference_anthropic_ok": Case((), _instrumentors(_oi_anthropic), _message,
                                       ("anthropic", "openinference-instrumentation-anthropic")),
    # OpenInference on anthropic: 529 Overloaded twice (the SDK retries once).
    "openinference_anthropic_overloaded": Case(
        ("529", "529"), _instrumentors(_oi_anthropic), _message,
        ("anthropic", "openinference-instrumentation-anthropic")),
    # requests: a tool server answers 503, 503, then 200 to a hand-written retry loop.
    "requests_retries_recovered": Case(("503", "503", "ok"), _instrumentors(_requests),
                                       _requests_retrying,
                                       ("requests", "opentelemetry-instrumentation-requests")),
    # requests: the tool server answers 503 to all three tries.
    "requests_retries_exhausted": Case(("503", "503", "503"), _instrumentors(_requests),
                                       _requests_retrying,
                                       ("requests", "opentelemetry-instrumentation-requests")),
    # httpx: the tool server takes 1.5 s, the client's read timeout is 0.3 s.
    "httpx_read_timeout": Case(("slow:1.5",), _instrumentors(_httpx), _httpx_timeout,
                               ("httpx", "opentelemetry-instrumentation-httpx")),
    # LangGraph ReAct agent via OpenInference: model asks for search_kb, then answers.
    "langgraph_react_ok": Case(("tool:search_kb", "ok"), _instrumentors(_oi_langchain),
                               lambda url: _graph(url, search_kb), OI_LANGCHAIN),
    # LangGraph ReAct agent via OpenLLMetry: model asks for search_kb, then answers.
    "openllmetry_langgraph_react_ok": Case(("tool:search_kb", "ok"), _instrumentors(_ll_langchain),
                                           lambda url: _graph(url, search_kb), LL_LANGCHAIN),
    # LangGraph via OpenLLMetry: the orders lookup's service refuses the connection.
    "openllmetry_langgraph_tool_connection_refused": Case(
        ("tool:lookup_order",), _instrumentors(_ll_langchain),
        lambda url: _graph(url, lookup_order), LL_LANGCHAIN),
    # LangGraph: the model asks for the orders lookup, whose service refuses the connection.
    "langgraph_tool_connection_refused": Case(
        ("tool:lookup_order",), _instrumentors(_oi_langchain),
        lambda url: _graph(url, lookup_order), OI_LANGCHAIN),
    # LangGraph: the model answers 500 and ChatOpenAI does not retry.
    "langgraph_model_server_error": Case(("500",), _instrumentors(_oi_langchain),
                                         lambda url: _graph(url, search_kb), OI_LANGCHAIN),
    # LangGraph: a supervisor runs a research sub-agent (model, tool, model), then answers.
    "langgraph_nested_agents_ok": Case(("tool:search_kb", "ok", "ok"),
                                       _instrumentors(_oi_langchain), _nested_graph,
                                       OI_LANGCHAIN),
}
