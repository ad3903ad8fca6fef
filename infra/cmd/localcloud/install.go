package main

import (
	"context"
	"flag"
	"fmt"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// installCmd installs what up installs on first use (the pinned emulators and the Runtime
// Interface Emulator, in the user's cache) and says where: for a CI image, or before going
// offline.
func installCmd(args []string) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	emulators, rie, err := localcloud.Install(ctx, localcloud.Config{})
	if err != nil {
		return err
	}
	fmt.Printf("emulators: %s\naws-lambda-rie: %s\n", emulators, rie)
	return nil
}

// supportCmd prints what the local cloud runs of SAM: each resource type and event type with
// the properties it emulates and those it accepts without emulating them.
func supportCmd(args []string) error {
	fs := flag.NewFlagSet("support", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, s := range localcloud.SupportedResources {
		printSupported(s.Type, s)
	}
	for _, s := range localcloud.SupportedEvents {
		printSupported("AWS::Serverless::Function event "+s.Type, s)
	}
	fmt.Printf("AWS::Serverless::Function Metadata.BuildMethod: none, %s\n", strings.Join(localcloud.BuildMethods[1:], ", "))
	fmt.Println("anything else in a template stops the local cloud before it starts, naming the resource and the property")
	return nil
}

func printSupported(name string, s localcloud.Supported) {
	fmt.Printf("%s: %s\n", name, s.Becomes)
	if s.Properties == nil {
		fmt.Println("  every property accepted, not emulated")
		return
	}
	for _, want := range []localcloud.Support{localcloud.Emulated, localcloud.Accepted} {
		var names []string
		for p, got := range s.Properties {
			if got == want {
				names = append(names, p)
			}
		}
		sort.Strings(names)
		if len(names) > 0 {
			fmt.Printf("  %s: %s\n", want, strings.Join(names, ", "))
		}
	}
}
