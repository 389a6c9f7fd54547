output "bucket_name" {
  description = "The pipeline's bucket: upload PDFs to inbox/."
  value       = module.pagefleet.bucket_name
}

output "submit_command" {
  description = "How to submit a PDF."
  value       = module.pagefleet.submit_command
}

output "preflight" {
  description = "What `pagefleet preflight` checks: the variables that decide what the deploy needs of the account."
  value       = module.pagefleet.preflight
}
