import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Code, WharfApiError } from "wharf/sdk";
import { ApiError, TextField, violationsOf } from "./api-error";

const invalid = new WharfApiError({
  code: Code.InvalidArgument,
  message: "invalid repo",
  fieldViolations: [
    { field: "repo.name", description: "must be lowercase" },
    { field: "parent", description: "is not a group uid" },
  ],
});

describe("violationsOf", () => {
  it("finds a field's violations by path or by leaf name", () => {
    expect(violationsOf(invalid, "repo.name")).toEqual(["must be lowercase"]);
    expect(violationsOf(invalid, "name")).toEqual(["must be lowercase"]);
    expect(violationsOf(invalid, "parent")).toEqual(["is not a group uid"]);
    expect(violationsOf(invalid, "readme")).toEqual([]);
    expect(violationsOf(new Error("x"), "name")).toEqual([]);
  });
});

describe("ApiError and TextField", () => {
  afterEach(cleanup);

  it("shows the server's code and message, and the violations not shown beside a field", () => {
    render(
      <form>
        <TextField label="Name" field="repo.name" error={invalid} defaultValue="Bad" />
        <ApiError error={invalid} shownFields={["repo.name"]} />
      </form>,
    );
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("INVALID_ARGUMENT");
    expect(alert.textContent).toContain("invalid repo");
    expect(alert.textContent).toContain("is not a group uid");
    expect(alert.textContent).not.toContain("must be lowercase");
    const input = screen.getByLabelText("Name");
    expect(input.getAttribute("aria-invalid")).toBe("true");
    const describedBy = input.getAttribute("aria-describedby") ?? "";
    expect(document.getElementById(describedBy)?.textContent).toBe("must be lowercase");
  });

  it("shows a plain error's message, and nothing without an error", () => {
    const { rerender } = render(<ApiError error={new TypeError("Failed to fetch")} />);
    expect(screen.getByRole("alert").textContent).toContain("Failed to fetch");
    rerender(<ApiError error={undefined} />);
    expect(screen.queryByRole("alert")).toBeNull();
  });
});
