import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Command } from "commander";
import { addConfigOptions, configInputOf, SERVE_FIELDS } from "../../../src/cli/server/config-options.js";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import {
  createMirrorNames,
  type MirrorNames,
  MirrorUpstreamSpecError,
  parseMirrorUpstreams,
} from "../../../src/oci/mirror-names.js";

/** A mapper over `flags` whose existing organizations are `orgs`; `asked` counts the lookups. */
function mapper(flags: string[], orgs: string[], now = () => 0): { names: MirrorNames; asked: string[] } {
  const asked: string[] = [];
  const names = createMirrorNames({
    mappings: parseMirrorUpstreams(flags),
    isOrganization: async (name) => {
      asked.push(name);
      return orgs.includes(name);
    },
    now,
  });
  assert.ok(names, "a mapper for a mapping");
  return { names, asked };
}

describe("parseMirrorUpstreams", () => {
  it("reads host=org/upstream, repeated or comma-separated, lowercasing the host", () => {
    assert.deepEqual(
      parseMirrorUpstreams(["Docker.IO=acme/hub", "ghcr.io=acme/ghcr,reg.example:5000=beta/r"]),
      [
        { host: "docker.io", org: "acme", upstream: "hub" },
        { host: "ghcr.io", org: "acme", upstream: "ghcr" },
        { host: "reg.example:5000", org: "beta", upstream: "r" },
      ],
    );
    assert.deepEqual(parseMirrorUpstreams([]), []);
    assert.deepEqual(parseMirrorUpstreams([" docker.io = acme/hub ", ""]), [
      { host: "docker.io", org: "acme", upstream: "hub" },
    ]);
  });

  it("reads Docker Hub's other names as docker.io", () => {
    assert.deepEqual(
      parseMirrorUpstreams(["registry-1.docker.io=acme/hub"]).map((m) => m.host),
      ["docker.io"],
    );
    assert.throws(
      () => parseMirrorUpstreams(["docker.io=acme/hub", "index.docker.io=acme/other"]),
      /docker\.io is mapped twice/,
    );
  });

  it("refuses bad syntax, saying what is wrong", () => {
    const refused = (value: string, pattern: RegExp) =>
      assert.throws(
        () => parseMirrorUpstreams([value]),
        (err: unknown) => err instanceof MirrorUpstreamSpecError && pattern.test(err.message),
        value,
      );
    refused("docker.io", /is not <registry host>=<org>\/<upstream name>/);
    refused("docker.io=acme", /is not <registry host>=<org>\/<upstream name>/);
    refused("docker.io=acme/hub/x", /is not <registry host>=<org>\/<upstream name>/);
    refused("=acme/hub", /"" in "=acme\/hub" is not a registry host/);
    refused("https://docker.io=acme/hub", /is not a registry host/);
    refused("docker.io/library=acme/hub", /is not a registry host/);
    refused("docker.io=Acme/hub", /the organization "Acme" in "docker.io=Acme\/hub" must be/);
    refused("docker.io=acme/-hub", /the upstream name "-hub" .* must be/);
    assert.throws(
      () => parseMirrorUpstreams(["docker.io=acme/hub", "DOCKER.io=beta/hub"]),
      /docker\.io is mapped twice/,
    );
  });
});

describe("--mirror-upstream", () => {
  it("is none by default, read from the flag or WHARF_MIRROR_UPSTREAM", () => {
    assert.deepEqual(loadConfig({}, {}).mirrorUpstreams, []);
    const env = { WHARF_MIRROR_UPSTREAM: "docker.io=acme/hub,quay.io=acme/quay" };
    assert.deepEqual(
      loadConfig({}, env).mirrorUpstreams.map((m) => m.host),
      ["docker.io", "quay.io"],
    );
    assert.deepEqual(loadConfig({ mirrorUpstream: "ghcr.io=beta/gh" }, env).mirrorUpstreams, [
      { host: "ghcr.io", org: "beta", upstream: "gh" },
    ]);
  });

  it("is a clear start-up error naming the flag on bad syntax", () => {
    assert.throws(
      () => loadConfig({ mirrorUpstream: "docker.io:acme/hub" }, {}),
      (err: unknown) =>
        err instanceof ConfigError &&
        /^--mirror-upstream takes <registry host>=<org>\/<upstream name>: "docker.io:acme\/hub" is not/.test(
          err.message,
        ),
    );
  });

  it("may be given several times on `serve`; the values are joined", () => {
    const command = addConfigOptions(new Command("serve").exitOverride(), SERVE_FIELDS);
    command.parse(["--mirror-upstream", "docker.io=acme/hub", "--mirror-upstream", "quay.io=acme/quay"], {
      from: "user",
    });
    const input = configInputOf(command.opts(), SERVE_FIELDS);
    assert.equal(input.mirrorUpstream, "docker.io=acme/hub,quay.io=acme/quay");
    assert.deepEqual(
      loadConfig(input, {}).mirrorUpstreams.map((m) => `${m.host}=${m.org}/${m.upstream}`),
      ["docker.io=acme/hub", "quay.io=acme/quay"],
    );
  });
});

describe("createMirrorNames", () => {
  it("maps nothing without mappings", () => {
    assert.equal(createMirrorNames({ mappings: [], isOrganization: async () => false }), undefined);
  });

  it("maps ?ns= of a mapped host to the upstream's path, whatever the first component", async () => {
    const { names, asked } = mapper(["docker.io=acme/hub", "quay.io=acme/quay"], ["acme", "library"]);
    assert.equal(await names.map("library/alpine", "docker.io"), "acme/hub/library/alpine");
    assert.equal(await names.map("acme/app", "quay.io"), "acme/quay/acme/app");
    assert.equal(await names.map("coreos/etcd", "QUAY.IO"), "acme/quay/coreos/etcd");
    assert.equal(await names.map("library/alpine", "index.docker.io"), "acme/hub/library/alpine");
    assert.deepEqual(asked, [], "ns decides alone: no organization lookup");
  });

  it("serves ?ns= of a host that is not mapped as usual", async () => {
    const { names } = mapper(["docker.io=acme/hub"], []);
    assert.equal(await names.map("demo/app", "ghcr.io"), "demo/app");
    assert.equal(await names.map("acme/app", "127.0.0.1:5000"), "acme/app");
  });

  it("maps a path without ns whose first component is no organization to docker.io's upstream", async () => {
    const { names } = mapper(["docker.io=acme/hub"], ["acme"]);
    assert.equal(await names.map("library/alpine", undefined), "acme/hub/library/alpine");
    assert.equal(await names.map("bitnami/redis", undefined), "acme/hub/bitnami/redis");
    assert.equal(await names.map("demo/app", ""), "acme/hub/demo/app", "an empty ns is none");
    assert.equal(await names.map("acme/app", undefined), "acme/app", "an organization's own path");
    assert.equal(await names.map("acme/hub/library/alpine", undefined), "acme/hub/library/alpine");
  });

  it("lets an organization named like a Docker Hub namespace win", async () => {
    const { names } = mapper(["docker.io=acme/hub"], ["acme", "bitnami"]);
    assert.equal(await names.map("bitnami/redis", undefined), "bitnami/redis");
    assert.equal(await names.map("library/alpine", undefined), "acme/hub/library/alpine");
  });

  it("maps no path without ns when docker.io is not mapped", async () => {
    const { names, asked } = mapper(["quay.io=acme/quay"], []);
    assert.equal(await names.map("library/alpine", undefined), "library/alpine");
    assert.equal(await names.map("library/alpine", "quay.io"), "acme/quay/library/alpine");
    assert.deepEqual(asked, []);
  });

  it("leaves an invalid name as is, without a lookup", async () => {
    const { names, asked } = mapper(["docker.io=acme/hub"], []);
    assert.equal(await names.map("Library/alpine", undefined), "Library/alpine");
    assert.equal(await names.map("../etc", "docker.io"), "../etc");
    assert.deepEqual(asked, []);
  });

  it("keeps an organization answer for the TTL, then asks again", async () => {
    let now = 0;
    const orgs: string[] = [];
    const asked: string[] = [];
    const names = createMirrorNames({
      mappings: parseMirrorUpstreams(["docker.io=acme/hub"]),
      isOrganization: async (name) => {
        asked.push(name);
        return orgs.includes(name);
      },
      now: () => now,
      ttlMs: 1000,
    });
    assert.ok(names);
    assert.equal(await names.map("demo/app", undefined), "acme/hub/demo/app");
    orgs.push("demo");
    now = 999;
    assert.equal(await names.map("demo/other", undefined), "acme/hub/demo/other", "cached");
    now = 1000;
    assert.equal(await names.map("demo/app", undefined), "demo/app", "the new organization wins");
    assert.deepEqual(asked, ["demo", "demo"]);
  });
});
