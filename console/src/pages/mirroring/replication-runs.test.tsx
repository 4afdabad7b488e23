import { act, cleanup, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { registry } from "wharf/sdk";
import { ReplicationRuns } from "./replication-runs";

const { ReplicationRun_State: State } = registry;

/** The runs each successive list answers (the last one again once used up). */
let answers: Partial<registry.ReplicationRun>[][] = [];
let listed = 0;

vi.mock("../../lib/wharf-context", () => {
  // One client for every render, as the provider's memoised one is.
  const client = {
    registry: {
      replicationRuns: {
        listReplicationRuns: async () => {
          const runs = answers[Math.min(listed, answers.length - 1)] ?? [];
          listed++;
          return { runs: runs.map((r) => ({ errors: [], errorsOmitted: 0n, ...r })) };
        },
      },
      replicationRules: { runReplicationRule: async () => ({}) },
    },
  };
  return { useClient: () => client };
});

function run(state: registry.ReplicationRun_State, copiedBlobs: bigint): Partial<registry.ReplicationRun> {
  return {
    uid: "acme/0000000000000001/0000000000000002",
    state,
    copiedManifests: state === State.SUCCEEDED ? 1n : 0n,
    copiedBlobs,
    copiedBytes: 0n,
    skippedBlobs: 0n,
  };
}

const RULE = { uid: "acme/0000000000000001", name: "to-remote" } as registry.ReplicationRule;

describe("ReplicationRuns", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    listed = 0;
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it("reads the runs every second while one is running, and stops once it has ended", async () => {
    answers = [[run(State.RUNNING, 1n)], [run(State.RUNNING, 2n)], [run(State.SUCCEEDED, 3n)]];
    render(<ReplicationRuns rule={RULE} />);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(screen.getByTestId("run-state").textContent).toBe("RUNNING");
    expect(screen.getByTestId("copied-blobs").textContent).toBe("1");
    await act(() => vi.advanceTimersByTimeAsync(1000));
    expect(screen.getByTestId("copied-blobs").textContent).toBe("2");
    await act(() => vi.advanceTimersByTimeAsync(1000));
    expect(screen.getByTestId("run-state").textContent).toBe("SUCCEEDED");
    expect(screen.getByTestId("copied-manifests").textContent).toBe("1");
    expect(listed).toBe(3);
    for (let second = 0; second < 5; second++) await act(() => vi.advanceTimersByTimeAsync(1000));
    expect(listed).toBe(3);
  });

  it("does not poll when every run has ended", async () => {
    answers = [[run(State.FAILED, 0n)]];
    render(<ReplicationRuns rule={RULE} />);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(screen.getByTestId("run-state").textContent).toBe("FAILED");
    for (let second = 0; second < 5; second++) await act(() => vi.advanceTimersByTimeAsync(1000));
    expect(listed).toBe(1);
  });
});
