package localcloud

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ensureRIE installs the pinned Runtime Interface Emulator into Root/.local/bin when allowed.
func (c *Cloud) ensureRIE(ctx context.Context) error {
	if _, err := os.Stat(c.cfg.RIE); err == nil {
		return nil
	}
	if !c.cfg.Install {
		return fmt.Errorf("aws-lambda-rie not found at %s: run `make .local/bin/aws-lambda-rie` or `GOBIN=$PWD/.local/bin go install %s` (make up and make test install it)", c.cfg.RIE, RIEModule)
	}
	c.log.Info("installing the Lambda Runtime Interface Emulator", "module", RIEModule)
	cmd := exec.CommandContext(ctx, "go", "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Dir(c.cfg.RIE))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go install %s: %w\n%s", RIEModule, err, out)
	}
	return nil
}

// build compiles a function's main package into StateDir/build/<LogicalId>/bootstrap, for the
// host (the local cloud runs binaries natively, not in an Amazon Linux container).
func (c *Cloud) build(ctx context.Context, f *Function) (string, error) {
	out := filepath.Join(c.cfg.StateDir, "build", f.ID, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", out, ".")
	cmd.Dir = f.CodeDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s (%s): %w\n%s", f.ID, f.CodeDir, err, b)
	}
	return out, nil
}
