// The browser example's page logic: four calls to the floe server's
// Demo::Hello over ws, each result written into the page.
"use strict";

/* global Ice, Demo */

function show(id, text) {
    document.getElementById(id).textContent = text;
}

// 100 KB whose bytes depend on their position, so a reordered or shortened
// echo does not compare equal.
function pattern(size) {
    const data = new Uint8Array(size);
    for (let i = 0; i < size; ++i) {
        data[i] = (i * 31 + 7) & 0xff;
    }
    return data;
}

function sameBytes(a, b) {
    if (a.length !== b.length) {
        return false;
    }
    for (let i = 0; i < a.length; ++i) {
        if (a[i] !== b[i]) {
            return false;
        }
    }
    return true;
}

async function run(communicator) {
    const text = (await (await fetch("/proxy")).text()).trim();
    show("proxy", text);
    const hello = Demo.HelloPrx.uncheckedCast(communicator.stringToProxy(text));

    show("twoway", await hello.sayHello("browser"));

    const note = "oneway from the browser page";
    await hello.ice_oneway().note(note);
    // Requests on one connection are dispatched in order: the note is there.
    const notes = await hello.notes();
    show("oneway", `sent; the server has ${notes.length} note(s), last: "${notes[notes.length - 1]}"`);

    const data = pattern(100 * 1024);
    const back = await hello.echo(data);
    show("bytes", `${back.length} bytes back, ${sameBytes(back, data) ? "equal" : "DIFFERENT"}`);

    try {
        await hello.sayHello("");
        show("exception", "no exception");
    } catch (e) {
        if (e instanceof Demo.Refused) {
            show("exception", `${e.ice_id()}: ${e.reason}`);
        } else {
            throw e;
        }
    }
}

(async () => {
    const status = document.getElementById("status");
    const communicator = Ice.initialize();
    try {
        await run(communicator);
        status.dataset.state = "done";
        status.textContent = "done";
    } catch (e) {
        status.dataset.state = "failed";
        status.textContent = `failed: ${e}`;
    } finally {
        await communicator.destroy();
    }
})();
