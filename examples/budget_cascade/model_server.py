"""A model server speaking the OpenAI chat API, with the post-mortem's long tail.

It exports no spans: it stands for a vendor.

Prompts containing `tail` take TAIL_S; the first call of a prompt containing `flaky` answers 503.
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

TAIL_S = 8.0  # the post-mortem's 120 s tail, scaled down like the 60 s gateway to 3 s
FAST_S = 0.1
_flaky_seen: set[str] = set()


def _prompt(body: dict) -> str:
    return " ".join(str(message.get("content", "")) for message in body.get("messages", []))


async def completions(request: Request) -> JSONResponse:
    """Answer a chat completion slowly, quickly, or with a 503, as the prompt says."""
    body = await request.json()
    prompt = _prompt(body)
    if "flaky" in prompt and prompt not in _flaky_seen:
        _flaky_seen.add(prompt)
        return JSONResponse({"error": {"message": "overloaded", "type": "server_error"}},
                            status_code=503)
    await asyncio.sleep(TAIL_S if "tail" in prompt else FAST_S)
    return JSONResponse({
        "id": "chatcmpl-cascade", "object": "chat.completion", "created": 0,
        "model": body.get("model", "tail-model"),
        "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": f"answer to: {prompt}"}}]})


app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    uvicorn.run(app, host="127.0.0.1", port=parser.parse_args().port, log_level="warning")
