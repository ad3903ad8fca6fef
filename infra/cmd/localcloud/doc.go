// Command localcloud runs the application of template.yaml on local emulators (see package
// infra/localcloud):
//
//	localcloud up [-template template.yaml] [-state .local] [-envs Fn=3,Other=1] [-prefix p]
//	localcloud down [-state .local]
//	localcloud invoke [-state .local] FUNCTION [EVENT.json|-]
//
// up starts a supervisor process (localcloud serve) in its own session and returns when the
// cloud is ready and .local/endpoints.json is written; down stops exactly what up started.
package main
