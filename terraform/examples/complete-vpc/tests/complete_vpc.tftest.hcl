# The example planned against a mocked provider, offline: the VPC it makes for the pipeline.
#
# The pagefleet module (../../) configures its own aws provider (region, default tags, the
# offline endpoints), and a test's mock_provider replaces only this configuration's: planned,
# the module would ask real AWS for credentials. It is overridden here; tests/root.tftest.hcl
# plans it, and `terraform validate` of this example (make terraform-check) checks the call.

mock_provider "aws" {
  override_during = plan

  # The mock leaves IDs unknown at plan: these are the ones the assertions compare.
  mock_resource "aws_subnet" {
    defaults = { id = "subnet-0bbbbbbbbbbbbbbb0" }
  }
  mock_resource "aws_route_table" {
    defaults = { id = "rtb-0aaaaaaaaaaaaaaa0" }
  }
  mock_resource "aws_nat_gateway" {
    defaults = { id = "nat-0aaaaaaaaaaaaaaa0" }
  }
}

# IDs to recognise in the outputs.
override_resource {
  target          = aws_subnet.private[0]
  override_during = plan
  values          = { id = "subnet-0aaaaaaaaaaaaaaa1" }
}

override_resource {
  target          = aws_subnet.private[1]
  override_during = plan
  values          = { id = "subnet-0aaaaaaaaaaaaaaa2" }
}

override_resource {
  target          = aws_route_table.private
  override_during = plan
  values          = { id = "rtb-0ccccccccccccccc0" }
}

override_module {
  target = module.pagefleet
}

run "complete_vpc" {
  command = plan

  assert {
    condition     = [for s in aws_subnet.private : s.availability_zone] == ["eu-west-1a", "eu-west-1b"] && alltrue([for a in aws_route_table_association.private : a.route_table_id == aws_route_table.private.id])
    error_message = "one private subnet per zone, each on the private route table"
  }

  assert {
    condition     = aws_route.private_nat.destination_cidr_block == "0.0.0.0/0" && aws_route.private_nat.nat_gateway_id == aws_nat_gateway.this.id && aws_nat_gateway.this.subnet_id == aws_subnet.public[0].id
    error_message = "the private subnets reach the internet through the NAT gateway in a public subnet (the vLLM sidecar downloads its model)"
  }

  assert {
    condition     = aws_vpc_endpoint.s3.vpc_endpoint_type == "Gateway" && aws_vpc_endpoint.s3.service_name == "com.amazonaws.eu-west-1.s3" && length(aws_vpc_endpoint.s3.route_table_ids) == 1
    error_message = "S3 traffic from the private route table takes the gateway endpoint, not the NAT gateway"
  }

  assert {
    condition     = output.private_subnet_ids == ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2"] && aws_vpc.this.enable_dns_hostnames
    error_message = "the private subnets are the ones handed to the runners; DNS hostnames on (ECS and the VPC endpoints need them)"
  }
}
