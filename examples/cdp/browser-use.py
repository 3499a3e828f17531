"""Drives a Benchtop computer with browser-use over its cdp_url (docs/API.md §16).

    pip install browser-use httpx
    LIGHTCONE_BASE_URL=http://127.0.0.1:4422 TZAFON_API_KEY=sk_... OPENAI_API_KEY=... \
        python examples/cdp/browser-use.py

Not run by Benchtop's tests: browser-use cannot be installed on the machines Benchtop is built on
(no PyPI there).
"""

import asyncio
import os

import httpx
from browser_use import Agent, Browser, ChatOpenAI

BASE = os.environ.get("LIGHTCONE_BASE_URL", "http://127.0.0.1:4422")
HEADERS = {"Authorization": f"Bearer {os.environ['TZAFON_API_KEY']}"}


async def main() -> None:
    async with httpx.AsyncClient(base_url=BASE, headers=HEADERS) as api:
        computer = (await api.post("/computers", json={"cdp": True})).raise_for_status().json()
        try:
            browser = Browser(cdp_url=computer["cdp_url"])
            agent = Agent(
                task="Open https://example.com and tell me the page's heading",
                llm=ChatOpenAI(model="gpt-4.1-mini"),
                browser=browser,
            )
            history = await agent.run()
            print(history.final_result())
        finally:
            (await api.delete(f"/computers/{computer['id']}")).raise_for_status()


asyncio.run(main())
