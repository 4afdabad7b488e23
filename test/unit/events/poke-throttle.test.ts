import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { throttlePokes } from "../../../src/events/poke-throttle.js";

describe("throttlePokes", () => {
  it("forwards the first poke at once and one more for all those within the interval", async () => {
    const forwarded: number[] = [];
    const started = performance.now();
    const pokes = throttlePokes(() => forwarded.push(performance.now() - started), 300);
    for (let i = 0; i < 5; i++) pokes.poke();
    assert.equal(forwarded.length, 1, "the first goes out at once");
    await sleep(100);
    pokes.poke();
    assert.equal(forwarded.length, 1, "later ones within the interval are held");
    await sleep(400);
    assert.equal(forwarded.length, 2, "one held poke goes out when the interval ends");
    assert.ok((forwarded[1] ?? 0) >= 290, `not before the interval ended (${forwarded[1]} ms)`);
    await sleep(400);
    assert.equal(forwarded.length, 2, "and nothing more without new pokes");
    pokes.poke();
    assert.equal(forwarded.length, 3, "a poke after a quiet interval goes out at once");
  });

  it("cancel drops the held poke", async () => {
    let forwarded = 0;
    const pokes = throttlePokes(() => forwarded++, 100);
    pokes.poke();
    pokes.poke();
    pokes.cancel();
    await sleep(250);
    assert.equal(forwarded, 1, "only the first");
  });
});
