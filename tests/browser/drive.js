// Loads a page in headless Chromium (playwright-core, a Chromium that is
// already installed: no browser download), waits until the page's #status
// leaves "running", and prints "RESULT <id> <text>" for every element that
// has a data-result attribute (white space folded to one space), after the
// page's console and error lines ("CONSOLE ...", "PAGEERROR ...").
//
//     node drive.js <url> <chromium> [<screenshot.png>]
//
// playwright-core is resolved through NODE_PATH (tests/browser.rs points it
// at target/interop-node/node_modules).
"use strict";

const { chromium } = require("playwright-core");

async function main() {
    const [url, executablePath, screenshot] = process.argv.slice(2);
    const browser = await chromium.launch({
        executablePath,
        headless: true,
        // Root in a container has no user namespaces for Chromium's sandbox.
        args: ["--no-sandbox"],
    });
    try {
        const page = await browser.newPage();
        page.on("console", (m) => console.log(`CONSOLE ${m.type()}: ${m.text()}`));
        page.on("pageerror", (e) => console.log(`PAGEERROR ${e}`));
        await page.goto(url);
        await page.waitForFunction(
            () => document.getElementById("status").dataset.state !== "running",
            null,
            { timeout: 20000 }
        );
        const result = await page.evaluate(() =>
            Object.fromEntries(
                [...document.querySelectorAll("[data-result]")].map((e) => [e.id, e.textContent])
            )
        );
        if (screenshot) {
            await page.screenshot({ path: screenshot, fullPage: true });
        }
        for (const [id, text] of Object.entries(result)) {
            console.log(`RESULT ${id} ${text.replace(/\s+/g, " ").trim()}`);
        }
    } finally {
        await browser.close();
    }
}

main().catch((e) => {
    console.log(`DRIVER ERROR ${e && e.stack ? e.stack : e}`);
    process.exit(1);
});
