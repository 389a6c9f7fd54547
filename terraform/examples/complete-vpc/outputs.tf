output "vpc_id" {
  description = "The VPC made for the runners."
  value       = aws_vpc.this.id
}

output "private_subnet_ids" {
  description = "The private subnets the runners launch in (through the NAT gateway)."
  value       = aws_subnet.private[*].id
}

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
