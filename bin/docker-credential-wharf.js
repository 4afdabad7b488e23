#!/usr/bin/env node
// `docker-credential-wharf`: the docker credential helper of `wharf auth configure-docker` (docker,
// podman and skopeo run it to get a registry token from the stored `wharf auth login`).
import { runCredentialHelper } from "../dist/cli/client/credential-helper.js";

process.exitCode = await runCredentialHelper(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
