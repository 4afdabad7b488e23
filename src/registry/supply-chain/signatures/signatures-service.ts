import { create } from "@bufbuild/protobuf";
import { notFound } from "../../../core/errors.js";
import type { ServiceHandlers } from "../../../core/service.js";
import { SignatureSchema, type SignaturesService } from "../../../gen/platform/registry/v2/signatures_pb.js";
import type { Store } from "../../../storage/store.js";
import { validateDigest } from "../../names.js";
import type { SignatureVerifier } from "../supply-chain.js";

/** What SignaturesService is built from. */
export interface SignaturesServiceDeps {
  store: Pick<Store, "repos" | "manifests">;
  /** Finds and verifies the signatures (the composition root's verifier, with its cache). */
  signatures: SignatureVerifier;
}

/**
 * SignaturesService: the signatures of an image, each verified against the keys trusted at the
 * repo and its folders. NOT_FOUND for a repo or a manifest the repo does not hold.
 */
export function createSignaturesService(
  deps: SignaturesServiceDeps,
): ServiceHandlers<typeof SignaturesService> {
  const { store } = deps;
  return {
    async listSignatures(req) {
      validateDigest(req.digest);
      const repo = await store.repos.get(req.repoUid);
      if (!repo) throw notFound("repo", req.repoUid);
      if (!(await store.manifests.has(req.repoUid, req.digest))) throw notFound("manifest", req.digest);
      const checks = await deps.signatures.signatures({ uid: repo.uid, name: repo.name }, req.digest);
      return { signatures: checks.map((c) => create(SignatureSchema, c)) };
    },
  };
}
